"""Thin views for reviews over the API, composed with the recordings' by `config/urls.py`."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from access import Capability
from access.scope import scope_for_request
from core.api.parsers import parse_with
from qa.api.scope import recording_check_visible
from core.api.schema import BAD_REQUEST, NOT_FOUND, TOO_LARGE, ErrorSerializer
from access.models import ApiKey
from qa.models import Recording
from reviews.api.serializers import RecordingWithReviewsSerializer, ReviewInputSerializer, ReviewSerializer
from reviews.selectors import recording_detail_with_reviews, recording_is_blind_for, review_detail
from reviews.services import review_create


@extend_schema(tags=["recordings"])
class RecordingDetailView(GenericAPIView):
    serializer_class = RecordingWithReviewsSerializer
    session_permissions = {"GET": Capability.READ_RECORDINGS}

    @extend_schema(
        responses={200: RecordingWithReviewsSerializer, 404: NOT_FOUND}, summary=_("A recording with its scores")
    )
    def get(self, request: Request, pk: int) -> Response:
        try:
            recording = recording_detail_with_reviews(pk=pk)
        except Recording.DoesNotExist:
            raise NotFound() from None
        recording_check_visible(request, recording)  # a key bound to another source: 404
        # Blind means blind on the API too: a supervisor's session reads no judgment the page hides.
        hidden = not isinstance(request.auth, ApiKey) and recording_is_blind_for(recording=recording, user=request.user)
        serializer = self.get_serializer(recording, context={**self.get_serializer_context(), "judgment_hidden": hidden})
        return Response(serializer.data)


@extend_schema(tags=["reviews"])
class RecordingReviewView(GenericAPIView):
    """Also served at `/recordings/{id}/review`, the path external tools were given."""

    # A supervisor's session, or a key made with review rights.
    session_permissions = {"POST": Capability.REVIEW}
    key_permissions = {"POST": "can_review"}
    serializer_class = ReviewInputSerializer

    @extend_schema(
        request=ReviewInputSerializer,
        responses={
            201: ReviewSerializer,
            400: BAD_REQUEST,
            404: NOT_FOUND,
            403: OpenApiResponse(ErrorSerializer, description=_("This user or key may not review.")),
            409: OpenApiResponse(
                ErrorSerializer,
                description=_(
                    "The recording is not judged yet, already has a final review (send replace_final), "
                    "or another supervisor holds its claim (claimed_by, claimed_until)."
                ),
            ),
            413: TOO_LARGE,
        },
        summary=_("Post a supervisor's review of the recording's current judgment"),
    )
    def post(self, request: Request, pk: int) -> Response:
        recording = get_object_or_404(Recording.objects.visible_to(scope_for_request(request)), pk=pk)
        api_key = request.auth if isinstance(request.auth, ApiKey) else None
        values = parse_with(ReviewInputSerializer, request.data, reviewer_required=api_key is not None)
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
            reject_reason=values["reject_reason"],
            replace_final=values["replace_final"],
        )
        url = reverse("api:recording-detail", kwargs={"pk": pk}, request=request)
        return Response(
            ReviewSerializer(review_detail(pk=review.pk)).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": url},
        )
