"""Thin views for recordings: parse with a serializer, call a service or selector, shape the answer.

A recording's detail (with its reviews) and its review endpoint are served by `reviews.api`;
the rubrics by `rubrics.api`; `config/urls.py` composes them under /api/.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from access import Capability, public
from access.scope import scope_for_request
from core.api.parsers import JSONParser, parse_with
from qa.api.recording_input import BATCH_MAX, recording_input, rubric_lookup
from core.api.schema import BAD_REQUEST, NO_PAGE, NOT_FOUND, TOO_LARGE
from qa.api.serializers import (
    ConflictSerializer,
    JudgeRunSerializer,
    RecordingBatchResultSerializer,
    RecordingBatchSerializer,
    RecordingFilterSerializer,
    RecordingIngestSerializer,
    RecordingSerializer,
    RejudgeConflictSerializer,
)
from core.errors import InvalidInputError
from qa.judging import recording_enqueue_judging
from qa.api.scope import recording_team_check, source_apply
from qa.models import Recording
from qa.selectors import recording_active_run, recording_list
from qa.services import (
    Ingested,
    IngestStatus,
    RecordingConflictError,
    recording_ingest,
    recording_prepare,
    recordings_ingest,
)



@extend_schema(tags=["recordings"])
class RecordingsView(GenericAPIView):
    serializer_class = RecordingSerializer
    # JSON with a transcript, or multipart/form-data with the call's audio.
    parser_classes = [JSONParser, MultiPartParser]
    session_permissions = {"GET": Capability.READ_RECORDINGS, "POST": Capability.ADD_RECORDINGS}

    @extend_schema(
        parameters=[RecordingFilterSerializer],
        responses={200: RecordingSerializer(many=True), 400: BAD_REQUEST, 404: NO_PAGE},
        summary=_("List recordings, newest first"),
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def get_queryset(self) -> QuerySet[Recording]:
        filters = parse_with(RecordingFilterSerializer, self.request.query_params)
        return recording_list(filters=filters, scope=scope_for_request(self.request))

    @extend_schema(
        request=RecordingIngestSerializer,
        responses={
            201: OpenApiResponse(RecordingSerializer, description=_("Stored; its judgment is enqueued.")),
            200: OpenApiResponse(
                RecordingSerializer, description=_("Sent before with the same content: nothing changed.")
            ),
            400: BAD_REQUEST,
            409: OpenApiResponse(ConflictSerializer, description=_("Sent before with different content.")),
            413: TOO_LARGE,
        },
        summary=_("Post a recording to be judged (idempotent on source and external_id)"),
    )
    def post(self, request: Request) -> Response:
        # A body over QA_AUDIO_MAX_BYTES (and the form's room) was refused unread: config.body_limit.
        scope = scope_for_request(request)
        if isinstance(request.data, QueryDict):  # multipart/form-data, with the audio
            values = parse_with(RecordingIngestSerializer, request.data, scope=scope)
        else:
            values = recording_input(request.data, rubric=rubric_lookup(scope))
        source_apply(request, values)
        recording_team_check(scope, values)
        recording, created = recording_ingest(**values)
        body = self.get_serializer(recording).data
        if not created:
            return Response(body, status=status.HTTP_200_OK)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["links"]["self"]})


@extend_schema(tags=["recordings"])
class RecordingBatchView(GenericAPIView):
    serializer_class = RecordingBatchResultSerializer
    session_permissions = {"POST": Capability.ADD_RECORDINGS}

    @extend_schema(
        request=RecordingBatchSerializer,
        responses={
            200: OpenApiResponse(
                RecordingBatchResultSerializer,
                description=_("One result per recording, in the order sent; see each result's status."),
            ),
            400: BAD_REQUEST,
            413: TOO_LARGE,
        },
        summary=_("Post up to 500 recordings at once, each accepted or refused on its own"),
    )
    def post(self, request: Request) -> Response:
        items = batch_items(request.data)
        scope = scope_for_request(request)
        rubric = rubric_lookup(scope)
        results: list[dict | None] = [None] * len(items)
        prepared, positions = [], []
        for index, item in enumerate(items):
            try:
                values = recording_input(item, rubric=rubric)
                source_apply(request, values)
                recording_team_check(scope, values)
                prepared.append(recording_prepare(**values))
            except InvalidInputError as error:
                results[index] = {"index": index, "status": status.HTTP_400_BAD_REQUEST, "errors": error.errors}
                continue
            positions.append(index)
        for index, ingested in zip(positions, recordings_ingest(recordings=prepared), strict=True):
            results[index] = {"index": index, **batch_result(ingested, request)}
        return Response({"results": results})


def batch_items(data: Any) -> list:
    """The request's list of recordings, or the 400 that says what is wrong with it (nothing is stored)."""
    if isinstance(data, list):
        raise InvalidInputError({"recordings": _('Send an object, {"recordings": [...]}, not a bare list.')})
    if not isinstance(data, dict) or "recordings" not in data:
        raise InvalidInputError({"recordings": _('Send an object, {"recordings": [...]}.')})
    items = data["recordings"]
    if not isinstance(items, list) or not items:
        raise InvalidInputError({"recordings": _("Send a non-empty list of recordings.")})
    if len(items) > BATCH_MAX:
        raise InvalidInputError(
            {
                "recordings": _("Send at most %(max)s recordings in one request; this one has %(count)s.")
                % {"max": BATCH_MAX, "count": len(items)}
            }
        )
    return items


def batch_result(ingested: Ingested, request: Request) -> dict:
    """One stored (or refused) recording's result, with the status a single post would have answered."""
    if ingested.status is IngestStatus.NOT_STORED:
        return {
            "status": status.HTTP_503_SERVICE_UNAVAILABLE,
            "detail": str(_("Not stored: a database error stopped its group of recordings. Send it again.")),
        }
    recording = ingested.recording
    reference = {
        "id": recording.pk,
        "url": reverse("api:recording-detail", kwargs={"pk": recording.pk}, request=request),
        "status": recording.status,
    }
    if ingested.status is IngestStatus.CONFLICT:
        return {
            "status": status.HTTP_409_CONFLICT,
            "detail": str(RecordingConflictError(recording)),
            "recording": reference,
        }
    created = ingested.status is IngestStatus.CREATED
    return {"status": status.HTTP_201_CREATED if created else status.HTTP_200_OK, "recording": reference}


@extend_schema(tags=["recordings"])
class RecordingRejudgeView(GenericAPIView):
    serializer_class = JudgeRunSerializer
    session_permissions = {"POST": Capability.REJUDGE}

    @extend_schema(
        request=None,
        responses={
            202: OpenApiResponse(JudgeRunSerializer, description=_("A new run is enqueued.")),
            404: NOT_FOUND,
            409: OpenApiResponse(RejudgeConflictSerializer, description=_("A run is already pending or running.")),
        },
        summary=_("Judge the recording again (a new run; earlier runs are kept)"),
    )
    def post(self, request: Request, pk: int) -> Response:
        recording = get_object_or_404(Recording.objects.visible_to(scope_for_request(request)), pk=pk)
        if not recording.transcript:
            return Response(
                {"detail": _("Recording %(id)s has no transcript yet: its audio is being transcribed.") % {"id": pk}},
                status=status.HTTP_409_CONFLICT,
            )
        active = recording_active_run(recording=recording)
        if active is not None:
            # Nothing new would start; say so instead of pretending a rejudge was queued.
            return Response(
                {
                    "detail": _("Recording %(id)s is already being judged.") % {"id": pk},
                    "run": self.get_serializer(active).data,
                },
                status=status.HTTP_409_CONFLICT,
            )
        run = recording_enqueue_judging(recording=recording)
        return Response(self.get_serializer(run).data, status=status.HTTP_202_ACCEPTED)


@public  # answers only "not found", to anyone
@csrf_exempt  # nothing to protect, and a POST must get the same JSON 404
def api_not_found(request: HttpRequest) -> JsonResponse:
    """Any other URL under /api/: a JSON 404 like the API's own, not the site's HTML page."""
    return JsonResponse({"detail": _("Not found.")}, status=404)
