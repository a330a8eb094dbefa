"""Thin views: parse with a serializer, call a service or selector, shape the answer."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.serializers import Serializer

from qa.api.permissions import CanReview
from qa.api.serializers import (
    VALIDATION_ERROR_SCHEMA,
    ConflictSerializer,
    ErrorSerializer,
    JudgeRunSerializer,
    RecordingDetailSerializer,
    RecordingFilterSerializer,
    RecordingIngestSerializer,
    RecordingSerializer,
    RejudgeConflictSerializer,
    ReviewInputSerializer,
    ReviewSerializer,
    RubricDetailSerializer,
    RubricQuerySerializer,
    RubricSummarySerializer,
)
from qa.judging import recording_enqueue_judging
from qa.models import ApiKey, Recording
from qa.selectors import (
    recording_active_run,
    recording_detail,
    recording_list,
    review_detail,
    rubric_detail,
    rubric_list_current,
)
from qa.services import recording_ingest
from reviews.services import review_create
from rubrics.models import Rubric

# A browser session posting without naming a source.
SESSION_SOURCE = "web"

BAD_REQUEST = OpenApiResponse(VALIDATION_ERROR_SCHEMA, description=_("Bad input, one message per field."))
NOT_FOUND = OpenApiResponse(ErrorSerializer, description=_("No such object."))
NO_PAGE = OpenApiResponse(ErrorSerializer, description=_("No such page."))
TOO_LARGE = OpenApiResponse(ErrorSerializer, description=_("The body is larger than QA_MAX_BODY_BYTES."))


def _parse(serializer_class: type[Serializer], data: Any, **context: Any) -> Any:
    """The serializer's validated data; a ValidationError becomes the 400."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


@extend_schema(tags=["recordings"])
class RecordingsView(GenericAPIView):
    serializer_class = RecordingSerializer

    @extend_schema(
        parameters=[RecordingFilterSerializer],
        responses={200: RecordingSerializer(many=True), 400: BAD_REQUEST, 404: NO_PAGE},
        summary=_("List recordings, newest first"),
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def get_queryset(self) -> QuerySet[Recording]:
        return recording_list(filters=_parse(RecordingFilterSerializer, self.request.query_params))

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
        values = _parse(RecordingIngestSerializer, request.data)
        if "source" not in values:
            values["source"] = request.auth.name if isinstance(request.auth, ApiKey) else SESSION_SOURCE
        recording, created = recording_ingest(**values)
        body = self.get_serializer(recording).data
        if not created:
            return Response(body, status=status.HTTP_200_OK)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["links"]["self"]})


@extend_schema(tags=["recordings"])
class RecordingDetailView(GenericAPIView):
    serializer_class = RecordingDetailSerializer

    @extend_schema(responses={200: RecordingDetailSerializer, 404: NOT_FOUND}, summary=_("A recording with its scores"))
    def get(self, request: Request, pk: int) -> Response:
        try:
            recording = recording_detail(pk=pk)
        except Recording.DoesNotExist:
            raise NotFound() from None
        return Response(self.get_serializer(recording).data)


@extend_schema(tags=["recordings"])
class RecordingRejudgeView(GenericAPIView):
    serializer_class = JudgeRunSerializer

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
        recording = get_object_or_404(Recording, pk=pk)
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


@extend_schema(tags=["reviews"])
class RecordingReviewView(GenericAPIView):
    """Also served at `/recordings/{id}/review`, the path external tools were given."""

    permission_classes = [CanReview]
    serializer_class = ReviewInputSerializer

    @extend_schema(
        request=ReviewInputSerializer,
        responses={
            201: ReviewSerializer,
            400: BAD_REQUEST,
            404: NOT_FOUND,
            409: OpenApiResponse(ErrorSerializer, description=_("The recording is not judged yet.")),
            413: TOO_LARGE,
        },
        summary=_("Post a supervisor's review of the recording's current judgment"),
    )
    def post(self, request: Request, pk: int) -> Response:
        recording = get_object_or_404(Recording, pk=pk)
        api_key = request.auth if isinstance(request.auth, ApiKey) else None
        values = _parse(ReviewInputSerializer, request.data, reviewer_required=api_key is not None)
        review = review_create(
            recording=recording,
            decision=values["decision"],
            # With a key the body names the person; with a session it is the user, whatever the body says.
            reviewer=values["reviewer"] if api_key else request.user.get_username(),
            user=None if api_key else request.user,
            api_key=api_key,
            adjusted_mean=values.get("adjusted_mean"),
            comment=values["comment"],
            criteria=values["criteria"],
        )
        url = reverse("api:recording-detail", kwargs={"pk": pk}, request=request)
        return Response(
            ReviewSerializer(review_detail(pk=review.pk)).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": url},
        )


@extend_schema(tags=["rubrics"])
class RubricsView(GenericAPIView):
    serializer_class = RubricSummarySerializer

    @extend_schema(
        responses={200: RubricSummarySerializer(many=True), 404: NO_PAGE},
        summary=_("The latest published version of each rubric"),
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def get_queryset(self) -> QuerySet[Rubric]:
        return rubric_list_current()


@extend_schema(tags=["rubrics"])
class RubricDetailView(GenericAPIView):
    serializer_class = RubricDetailSerializer

    @extend_schema(
        parameters=[RubricQuerySerializer],
        responses={200: RubricDetailSerializer, 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("A rubric version with its criteria, and the list of its versions"),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = _parse(RubricQuerySerializer, request.query_params)
        try:
            rubric = rubric_detail(slug=slug, version=query.get("version"))
        except Rubric.DoesNotExist:
            raise NotFound() from None
        return Response(self.get_serializer(rubric).data)


@csrf_exempt  # nothing to protect, and a POST must get the same JSON 404
def api_not_found(request: HttpRequest) -> JsonResponse:
    """Any other URL under /api/: a JSON 404 like the API's own, not the site's HTML page."""
    return JsonResponse({"detail": _("Not found.")}, status=404)
