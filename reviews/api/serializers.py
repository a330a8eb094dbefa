"""Reviews over the API: a supervisor's review in, the reviews of a recording out."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from qa.api.serializers import QualitySerializer, RecordingDetailSerializer, StringField
from qa.models import Recording
from reviews.models import CriterionReview, Review
from reviews.selectors import review_quality
from reviews.services import CriterionAdjustment

# --- Input -------------------------------------------------------------------


class ReviewCriterionSerializer(serializers.Serializer):
    criterion_key = StringField(max_length=64)
    adjusted_value = serializers.IntegerField(required=False, allow_null=True)
    comment = StringField(required=False, allow_blank=True, default="")
    rejected = serializers.BooleanField(
        required=False, default=False, help_text=_("The judge got this criterion wrong.")
    )
    not_applicable = serializers.BooleanField(
        required=False,
        default=False,
        help_text=_(
            "The criterion does not apply to the call (send no adjusted_value). Only for a criterion whose "
            "rubric lists a 'not applicable' exception."
        ),
    )

    def to_internal_value(self, data: Any) -> CriterionAdjustment:
        return CriterionAdjustment(**super().to_internal_value(data))


class ReviewInputSerializer(serializers.Serializer):
    reviewer = StringField(
        max_length=150,
        required=False,
        help_text=_("Who reviewed. Required with an API key; with a session, the logged-in user is the reviewer."),
    )
    decision = serializers.ChoiceField(choices=Review.Decision.choices)
    reject_reason = serializers.ChoiceField(
        choices=Review.RejectReason.choices,
        required=False,
        allow_blank=True,
        default="",
        help_text=_(
            "Optional, only with decision 'reject'. A reject must also mark at least one "
            "criterion rejected or adjusted, with its comment."
        ),
    )
    adjusted_mean = serializers.FloatField(required=False, allow_null=True)
    comment = StringField(required=False, allow_blank=True, default="")
    criteria = ReviewCriterionSerializer(many=True, required=False, default=list)
    replace_final = serializers.BooleanField(
        required=False,
        default=False,
        help_text=_(
            "Replace the call's final review with this one. Without it, a call whose latest review is final "
            "answers 409, so a retried request never supersedes a finished call."
        ),
    )

    def validate(self, values: dict[str, Any]) -> dict[str, Any]:
        # A key speaks for a system, so the person must be named; a session already names them.
        if self.context.get("reviewer_required") and not values.get("reviewer"):
            raise serializers.ValidationError(
                {"reviewer": _("Say who reviewed: with an API key, 'reviewer' is required.")}
            )
        return values


# --- Output ------------------------------------------------------------------


class CriterionReviewSerializer(serializers.ModelSerializer):
    criterion_key = serializers.CharField(source="criterion.key")

    class Meta:
        model = CriterionReview
        fields = ["criterion_key", "adjusted_value", "not_applicable", "rejected", "comment"]


class ReviewSerializer(serializers.ModelSerializer):
    api_key = serializers.CharField(
        source="api_key.name", allow_null=True, help_text=_("The key that posted it, if any.")
    )
    criteria = CriterionReviewSerializer(many=True)

    class Meta:
        model = Review
        fields = [
            "id",
            "run",
            "reviewer",
            "api_key",
            "decision",
            "reject_reason",
            "adjusted_mean",
            "comment",
            "blind",
            "criteria",
            "created_at",
        ]


# The same component as before the layers were split: clients generated from the schema keep their type.
@extend_schema_serializer(component_name="RecordingDetail")
class FinalReviewQualitySerializer(QualitySerializer):
    """The call's quality score by the latest final review's values."""

    review = serializers.IntegerField(help_text=_("The review's id."))
    decision = serializers.CharField()


class RecordingWithReviewsSerializer(RecordingDetailSerializer):
    """A recording with its judgment and its reviews: GET /api/recordings/{id}/."""

    reviews = ReviewSerializer(many=True)
    latest_final_review = serializers.SerializerMethodField(
        help_text=_("The quality score by the latest approve or reject; null when there is none or it is hidden.")
    )

    class Meta(RecordingDetailSerializer.Meta):
        fields = [*RecordingDetailSerializer.Meta.fields, "reviews", "latest_final_review"]

    @extend_schema_field(FinalReviewQualitySerializer(allow_null=True))
    def get_latest_final_review(self, recording: Recording) -> dict | None:
        if self.context.get("judgment_hidden"):
            return None
        # The reviews come newest first: the first final one is the latest.
        review = next((review for review in recording.reviews.all() if review.is_final), None)
        if review is None:
            return None
        quality = review_quality(review=review, rubric=recording.rubric)
        return {
            "review": review.pk,
            "decision": review.decision,
            **QualitySerializer(quality).data,
        }

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        if self.context.get("judgment_hidden"):
            data["reviews"] = []  # earlier reviews carry values as telling as the judge's
        return data
