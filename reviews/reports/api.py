"""The report figures over the API: the same filters and selectors as the pages.

GET /api/reports/deviation/ and /api/reports/evidence/ with the pages' query
parameters (rubric is required); a bad parameter answers 400 naming it.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from qa.api.schema import BAD_REQUEST
from reviews.reports.access import CanViewReports
from reviews.reports.forms import ReportFilterForm
from reviews.reports.selectors import DeviationReport, EvidenceReport, ReportFilters, deviation_report, evidence_report


class RubricSerializer(serializers.Serializer):
    slug = serializers.CharField()
    version = serializers.IntegerField()
    name = serializers.CharField()


class CriterionDeviationSerializer(serializers.Serializer):
    criterion_key = serializers.CharField(source="criterion.key")
    title = serializers.CharField(source="criterion.title")
    scale_min = serializers.IntegerField(source="criterion.scale_min")
    scale_max = serializers.IntegerField(source="criterion.scale_max")
    n = serializers.IntegerField(source="agreement.n", help_text="Pairs with a human value.")
    model_mean = serializers.FloatField(source="agreement.model_mean", allow_null=True)
    human_mean = serializers.FloatField(source="agreement.human_mean", allow_null=True)
    bias = serializers.FloatField(source="agreement.bias", allow_null=True, help_text="Mean of model − human.")
    mae = serializers.FloatField(source="agreement.mae", allow_null=True)
    exact_agreement = serializers.FloatField(source="agreement.exact_agreement", allow_null=True)
    within_one = serializers.FloatField(source="agreement.within_one", allow_null=True)
    qwk = serializers.FloatField(
        source="agreement.qwk",
        allow_null=True,
        help_text="Quadratic weighted kappa; null without pairs or when both sides used one and the same value.",
    )
    reviewed = serializers.IntegerField(source="agreement.reviewed", help_text="Final reviews scored on the criterion.")
    rejected = serializers.IntegerField(source="agreement.rejected")
    rejection_rate = serializers.FloatField(source="agreement.rejection_rate", allow_null=True)
    not_applicable_disputed = serializers.IntegerField(
        source="agreement.not_applicable_disputed",
        help_text="Reviewed scores where one side found the criterion not applicable and the other gave it a value.",
    )


class DeviationGroupSerializer(serializers.Serializer):
    recordings = serializers.IntegerField(help_text="Recordings whose latest review is final (approve or reject).")
    needs_review = serializers.IntegerField(help_text="Recordings whose latest review asks for another: not counted.")
    criteria = CriterionDeviationSerializer(many=True)
    reject_reasons = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Latest reviews that reject, by overall reason (an empty key: none given).",
    )


class DeviationGroupsSerializer(serializers.Serializer):
    random_audit = DeviationGroupSerializer(help_text="The random sample: the unbiased estimate.")
    flagged = DeviationGroupSerializer(help_text="Sent for low confidence or unverified evidence.")
    all = DeviationGroupSerializer(help_text="Every reviewed recording.")


class DeviationReportSerializer(serializers.Serializer):
    rubric = RubricSerializer()
    groups = DeviationGroupsSerializer()


class TallySerializer(serializers.Serializer):
    """Scores, how many have an unverified quote, and their share (null without scores)."""

    total = serializers.IntegerField(source="tally.total")
    unverified = serializers.IntegerField(source="tally.unverified")
    rate = serializers.FloatField(source="tally.rate", allow_null=True)


class CriterionEvidenceSerializer(TallySerializer):
    criterion_key = serializers.CharField(source="criterion.key")
    title = serializers.CharField(source="criterion.title")
    description = serializers.CharField(source="criterion.description")
    evidence_guidance = serializers.CharField(source="criterion.evidence_guidance")
    unverified_by_status = serializers.DictField(
        child=serializers.IntegerField(), help_text="Unverified scores per verification status: why quotes failed."
    )


class WeekSerializer(TallySerializer):
    week = serializers.DateField(help_text="Monday of the week the runs were made.")


class ModelEvidenceSerializer(TallySerializer):
    model = serializers.CharField()
    prompt_version = serializers.CharField()
    weeks = WeekSerializer(many=True)


class EvidenceReportSerializer(serializers.Serializer):
    rubric = RubricSerializer()
    overall = TallySerializer(source="*")
    criteria = CriterionEvidenceSerializer(many=True)
    models = ModelEvidenceSerializer(many=True)
    weeks = WeekSerializer(many=True)


def _parameter(name: str, field: forms.Field) -> OpenApiParameter:
    kind = {forms.DateField: OpenApiTypes.DATE, forms.IntegerField: OpenApiTypes.INT}.get(type(field), OpenApiTypes.STR)
    return OpenApiParameter(name, kind, required=field.required, description=field.help_text or field.label)


FILTER_PARAMETERS = [_parameter(name, field) for name, field in ReportFilterForm.base_fields.items()]


class ReportAPIView(APIView):
    permission_classes = [CanViewReports]
    serializer_class: type[serializers.Serializer]

    def get(self, request: Request) -> Response:
        form = ReportFilterForm(request.query_params)
        if not form.is_valid():
            raise ValidationError(
                {
                    api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field: list(messages)
                    for field, messages in form.errors.items()
                }
            )
        return Response(self.serializer_class(self.report(form.filters())).data)

    def report(self, filters: ReportFilters) -> DeviationReport | EvidenceReport:
        raise NotImplementedError


@extend_schema(parameters=FILTER_PARAMETERS, responses={200: DeviationReportSerializer, 400: BAD_REQUEST})
class DeviationReportView(ReportAPIView):
    """Per criterion, how far the judge sits from the supervisors, in three groups never mixed."""

    serializer_class = DeviationReportSerializer

    def report(self, filters: ReportFilters) -> DeviationReport | EvidenceReport:
        return deviation_report(filters)


@extend_schema(parameters=FILTER_PARAMETERS, responses={200: EvidenceReportSerializer, 400: BAD_REQUEST})
class EvidenceReportView(ReportAPIView):
    """How often the judge's quotes fail verification: overall, per criterion, model and prompt version, week."""

    serializer_class = EvidenceReportSerializer

    def report(self, filters: ReportFilters) -> DeviationReport | EvidenceReport:
        return evidence_report(filters)
