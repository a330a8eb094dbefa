"""Disputes over the API: an agent's session disputes and acknowledges a review of their own call, a QA
lead's session lists and resolves disputes. Systems' keys have no part in it (a dispute is a person's)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from access import NO_KEY, SIGNED_IN, Capability, may
from access.scope import scope_for
from core.api.parsers import parse_with
from core.api.schema import BAD_REQUEST, NOT_FOUND, ErrorSerializer
from qa.api.serializers import StringField
from core.errors import InvalidInputError
from disputes.selectors import dispute_detail, dispute_list
from disputes.services import (
    CriterionResolution,
    DisputedValue,
    dispute_open,
    dispute_resolve,
    review_acknowledge,
)
from disputes.models import Dispute, DisputedCriterion
from reviews.models import Review

NO_KEYS = {"GET": NO_KEY, "POST": NO_KEY}
CONFLICT = OpenApiResponse(
    ErrorSerializer,
    description=_("Out of time (closed_at), already disputed, not the review that stands, or resolved already."),
)


class DisputedCriterionSerializer(serializers.ModelSerializer):
    criterion = serializers.CharField(source="criterion.key")

    class Meta:
        model = DisputedCriterion
        fields = [
            "criterion", "proposed_value", "proposed_not_applicable", "reason", "outcome", "resolved_value",
            "resolved_not_applicable", "lead_comment",
        ]  # fmt: skip


class DisputeSerializer(serializers.ModelSerializer):
    recording = serializers.IntegerField(source="recording_id")
    review = serializers.IntegerField(source="review_id")
    resolution = serializers.IntegerField(
        source="resolution_id", allow_null=True, help_text=_("The review the upheld criteria made (from_dispute).")
    )
    assigned_to = serializers.CharField(source="assigned_to.username", allow_null=True, default=None)
    resolved_by = serializers.CharField(source="resolved_by.username", allow_null=True, default=None)
    criteria = DisputedCriterionSerializer(many=True)

    class Meta:
        model = Dispute
        fields = [
            "id", "recording", "review", "agent_id", "status", "assigned_to", "due_at", "created_at", "resolved_at",
            "resolved_by", "resolution", "comment", "criteria",
        ]  # fmt: skip


class DisputedValueSerializer(serializers.Serializer):
    criterion = StringField(max_length=64)
    value = serializers.IntegerField(required=False, allow_null=True, default=None)
    not_applicable = serializers.BooleanField(required=False, default=False)
    reason = StringField(required=False, allow_blank=True, default="", help_text=_("Required: why."))

    def to_internal_value(self, data: Any) -> DisputedValue:
        values = super().to_internal_value(data)
        return DisputedValue(
            criterion_key=values["criterion"], value=values["value"], not_applicable=values["not_applicable"],
            reason=values["reason"],
        )  # fmt: skip


class DisputeInputSerializer(serializers.Serializer):
    criteria = DisputedValueSerializer(many=True)


class ResolutionSerializer(serializers.Serializer):
    criterion = StringField(max_length=64)
    outcome = serializers.ChoiceField(choices=[DisputedCriterion.Outcome.UPHELD, DisputedCriterion.Outcome.REJECTED])
    comment = StringField(required=False, allow_blank=True, default="", help_text=_("Required: why."))
    value = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text=_("Upheld with another value than the agent's.")
    )
    not_applicable = serializers.BooleanField(required=False, default=False)

    def to_internal_value(self, data: Any) -> CriterionResolution:
        values = super().to_internal_value(data)
        return CriterionResolution(
            criterion_key=values["criterion"], outcome=values["outcome"], comment=values["comment"],
            value=values["value"], not_applicable=values["not_applicable"],
        )  # fmt: skip


class ResolveInputSerializer(serializers.Serializer):
    criteria = ResolutionSerializer(many=True)
    comment = StringField(required=False, allow_blank=True, default="")


class AcknowledgeInputSerializer(serializers.Serializer):
    comment = StringField(required=False, allow_blank=True, default="")


class AcknowledgementSerializer(serializers.Serializer):
    review = serializers.IntegerField(source="review_id")
    comment = serializers.CharField()
    created_at = serializers.DateTimeField()


def _own_review(request: Request, pk: int) -> Review:
    """A final review of one of the agent's calls; any other is not found (nothing of another agent shows)."""
    review = Review.objects.visible_to(scope_for(request.user).as_agent()).filter(pk=pk).first()
    if review is None:
        raise NotFound(_("No review %(id)s of one of your calls.") % {"id": pk})
    return review


@extend_schema(tags=["reviews"])
class DisputeListView(GenericAPIView):
    """A QA lead sees every dispute, an agent their own."""

    serializer_class = DisputeSerializer
    session_permissions = {"GET": SIGNED_IN}
    key_permissions = NO_KEYS

    @extend_schema(
        parameters=[OpenApiParameter("status", enum=Dispute.Status.values, required=False)],
        responses={200: DisputeSerializer(many=True), 400: BAD_REQUEST, 403: ErrorSerializer},
        summary=_("Disputes: a QA lead's every one, an agent's own"),
    )
    def get(self, request: Request) -> Response:
        if not (may(request.user, Capability.RESOLVE_DISPUTES) or may(request.user, Capability.DISPUTE)):
            raise PermissionDenied(_("Only agents and QA leads have disputes."))
        wanted = request.query_params.get("status", "")
        if wanted and wanted not in Dispute.Status.values:
            choices = ", ".join(Dispute.Status.values)
            raise InvalidInputError({"status": _("Use one of: %(choices)s.") % {"choices": choices}})
        disputes = dispute_list(user=request.user, status=wanted)[:500]
        return Response(DisputeSerializer(disputes, many=True).data)


@extend_schema(tags=["reviews"])
class DisputeDetailView(GenericAPIView):
    serializer_class = DisputeSerializer
    session_permissions = {"GET": SIGNED_IN}
    key_permissions = NO_KEYS

    @extend_schema(responses={200: DisputeSerializer, 404: NOT_FOUND}, summary=_("A dispute"))
    def get(self, request: Request, pk: int) -> Response:
        try:
            dispute = dispute_detail(user=request.user, pk=pk)
        except Dispute.DoesNotExist:
            raise NotFound() from None
        return Response(DisputeSerializer(dispute).data)


@extend_schema(tags=["reviews"])
class ReviewDisputeView(GenericAPIView):
    serializer_class = DisputeInputSerializer
    session_permissions = {"POST": Capability.DISPUTE}
    key_permissions = NO_KEYS

    @extend_schema(
        request=DisputeInputSerializer,
        responses={201: DisputeSerializer, 400: BAD_REQUEST, 404: NOT_FOUND, 409: CONFLICT},
        summary=_("An agent disputes criteria of the final review of their call"),
    )
    def post(self, request: Request, pk: int) -> Response:
        review = _own_review(request, pk)
        values = parse_with(DisputeInputSerializer, request.data)
        dispute = dispute_open(review=review, user=request.user, criteria=values["criteria"])
        answer = DisputeSerializer(dispute_detail(user=request.user, pk=dispute.pk)).data
        return Response(answer, status=status.HTTP_201_CREATED)


@extend_schema(tags=["reviews"])
class ReviewAcknowledgeView(GenericAPIView):
    serializer_class = AcknowledgeInputSerializer
    session_permissions = {"POST": Capability.DISPUTE}
    key_permissions = NO_KEYS

    @extend_schema(
        request=AcknowledgeInputSerializer,
        responses={200: AcknowledgementSerializer, 400: BAD_REQUEST, 404: NOT_FOUND, 409: CONFLICT},
        summary=_("An agent acknowledges the final review of their call"),
    )
    def post(self, request: Request, pk: int) -> Response:
        review = _own_review(request, pk)
        values = parse_with(AcknowledgeInputSerializer, request.data)
        acknowledgement = review_acknowledge(review=review, user=request.user, comment=values["comment"])
        return Response(AcknowledgementSerializer(acknowledgement).data)


@extend_schema(tags=["reviews"])
class DisputeResolveView(GenericAPIView):
    serializer_class = ResolveInputSerializer
    session_permissions = {"POST": Capability.RESOLVE_DISPUTES}
    key_permissions = NO_KEYS

    @extend_schema(
        request=ResolveInputSerializer,
        responses={200: DisputeSerializer, 400: BAD_REQUEST, 404: NOT_FOUND, 409: CONFLICT},
        summary=_("A QA lead upholds or rejects each disputed criterion"),
    )
    def post(self, request: Request, pk: int) -> Response:
        try:
            dispute = dispute_detail(user=request.user, pk=pk)
        except Dispute.DoesNotExist:
            raise NotFound() from None
        values = parse_with(ResolveInputSerializer, request.data)
        dispute_resolve(dispute=dispute, user=request.user, resolutions=values["criteria"], comment=values["comment"])
        return Response(DisputeSerializer(dispute_detail(user=request.user, pk=pk)).data)
