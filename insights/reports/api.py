"""The report figures over the API: the same filters and selectors as the pages.

GET /api/reports/deviation/ and /api/reports/evidence/ with the pages' query
parameters (rubric is required); a bad parameter answers 400 naming it.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from access import Capability
from access.scope import scope_for_request
from core.api.schema import BAD_REQUEST
from reviews.figures.api import RubricSerializer, query_parameter
from reviews.report_page import ReportFilterForm
from insights.reports.forms import VersionsFilterForm
from insights.scorecards.api import AS_OF_FIELD, AsOfSerializer, as_of_data
from reviews.filters import ReportFilters
from insights.reports.selectors import (
    DeviationReport,
    EvidenceReport,
    deviation_report,
    evidence_report,
    versions_report,
)
from rubrics.api import RubricVersionSerializer


class AgreementSplitSerializer(serializers.Serializer):
    """The same figures on part of the reviewed scores."""

    n = serializers.IntegerField()
    model_mean = serializers.FloatField(allow_null=True)
    human_mean = serializers.FloatField(allow_null=True)
    bias = serializers.FloatField(allow_null=True)
    mae = serializers.FloatField(allow_null=True)
    exact_agreement = serializers.FloatField(allow_null=True)
    within_one = serializers.FloatField(allow_null=True)
    qwk = serializers.FloatField(allow_null=True)
    reviewed = serializers.IntegerField()
    rejected = serializers.IntegerField()
    rejection_rate = serializers.FloatField(allow_null=True)
    not_applicable_disputed = serializers.IntegerField()


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
    verified = AgreementSplitSerializer(help_text="The same figures on the scores whose quote verified.")
    unverified = AgreementSplitSerializer(
        help_text="The same figures on the scores whose quote did not verify: the judge's value is compared "
        "(the report measures the judge), though it counts nowhere else."
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
    warm_up = DeviationGroupSerializer(
        help_text="The first judgments of a new rubric version, prompt or model: a census of those, not a sample."
    )
    flagged = DeviationGroupSerializer(help_text="Sent for a doubt: low confidence, unverified evidence...")
    all = DeviationGroupSerializer(help_text="Every reviewed recording.")


class CriterionCeilingSerializer(serializers.Serializer):
    criterion_key = serializers.CharField(source="criterion.key")
    judge_human_qwk = serializers.FloatField(
        allow_null=True, help_text="The judge against the human reference: agreed values first, else the latest review."
    )
    judge_human_n = serializers.IntegerField(help_text="Calls with a number from both.")
    agreed_n = serializers.IntegerField(help_text="Of those, calls whose reference is an agreed value.")
    human_human_qwk = serializers.FloatField(
        allow_null=True, help_text="Supervisors against each other; null without human–human data (not zero)."
    )
    human_human_n = serializers.IntegerField(help_text="Calls with values from two or more independent supervisors.")
    degradation = serializers.FloatField(allow_null=True, help_text="judge_human_qwk − human_human_qwk.")
    reading = serializers.CharField(help_text="The comparison in plain words.")


class CriterionDisputesSerializer(serializers.Serializer):
    """A criterion's disputes (insights.reports.selectors.CriterionDisputes)."""

    criterion_key = serializers.CharField(source="criterion.key")
    opened = serializers.IntegerField(source="tally.opened", help_text="Disputes of a final review naming the criterion.")
    decided = serializers.IntegerField(source="tally.decided", help_text="Of those, resolved by a QA lead.")
    upheld = serializers.IntegerField(source="tally.upheld", help_text="Of those, upheld: a new final review by the lead.")
    upheld_share = serializers.FloatField(source="tally.upheld_share", allow_null=True, help_text="upheld / decided.")


class DeviationReportSerializer(serializers.Serializer):
    rubric = RubricSerializer()
    as_of = AsOfSerializer(**AS_OF_FIELD)
    groups = DeviationGroupsSerializer()
    disputes = CriterionDisputesSerializer(
        source="criteria_disputes", many=True, help_text="Agents' disputes per criterion."
    )
    ceiling = CriterionCeilingSerializer(
        many=True, help_text="Per criterion, how far the judge sits from the supervisors' agreement with each other."
    )


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
    as_of = AsOfSerializer(**AS_OF_FIELD)
    overall = TallySerializer(source="*")
    criteria = CriterionEvidenceSerializer(many=True)
    models = ModelEvidenceSerializer(many=True)
    weeks = WeekSerializer(many=True)


FILTER_PARAMETERS = [query_parameter(name, field) for name, field in ReportFilterForm.base_fields.items()]


def _valid(form: forms.Form) -> forms.Form:
    if not form.is_valid():
        raise ValidationError(
            {
                api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field: list(messages)
                for field, messages in form.errors.items()
            }
        )
    return form


class ReportAPIView(APIView):
    session_permissions = {"GET": Capability.READ_REPORTS}  # and any key
    serializer_class: type[serializers.Serializer]

    def get(self, request: Request) -> Response:
        filters = _valid(ReportFilterForm(request.query_params, scope=scope_for_request(request))).filters()
        return Response({**self.serializer_class(self.report(filters)).data, "as_of": as_of_data(filters)})

    def report(self, filters: ReportFilters) -> DeviationReport | EvidenceReport:
        raise NotImplementedError


@extend_schema(tags=["reports"], parameters=FILTER_PARAMETERS, responses={200: DeviationReportSerializer, 400: BAD_REQUEST})
class DeviationReportView(ReportAPIView):
    """Per criterion, how far the judge sits from the supervisors, in three groups never mixed."""

    serializer_class = DeviationReportSerializer

    def report(self, filters: ReportFilters) -> DeviationReport | EvidenceReport:
        return deviation_report(filters)


@extend_schema(tags=["reports"], parameters=FILTER_PARAMETERS, responses={200: EvidenceReportSerializer, 400: BAD_REQUEST})
class EvidenceReportView(ReportAPIView):
    """How often the judge's quotes fail verification: overall, per criterion, model and prompt version, week."""

    serializer_class = EvidenceReportSerializer

    def report(self, filters: ReportFilters) -> DeviationReport | EvidenceReport:
        return evidence_report(filters)


class VersionFiguresSerializer(serializers.Serializer):
    """A criterion in one version (a rubrics.reports CriterionFigures), over all reviewed calls."""

    version = serializers.IntegerField(source="criterion.rubric.version")
    criterion_key = serializers.CharField(source="criterion.key")
    reviewed = serializers.IntegerField(source="agreement.reviewed")
    rejected = serializers.IntegerField(source="agreement.rejected")
    rejection_rate = serializers.FloatField(source="agreement.rejection_rate", allow_null=True)
    scores = serializers.IntegerField(source="evidence.total", help_text="Judged scores, reviewed or not.")
    unverified = serializers.IntegerField(source="evidence.unverified")
    unverified_rate = serializers.FloatField(source="evidence.rate", allow_null=True)
    n = serializers.IntegerField(source="agreement.n", help_text="Pairs with a human value (MAE and QWK).")
    mae = serializers.FloatField(source="agreement.mae", allow_null=True)
    qwk = serializers.FloatField(source="agreement.qwk", allow_null=True)
    not_applicable_disputed = serializers.IntegerField(source="agreement.not_applicable_disputed")


class CriterionLineSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The key in the latest version that has the criterion.")
    title = serializers.CharField()
    versions = serializers.SerializerMethodField(
        help_text="One entry per version that has the criterion (under its key then), oldest first."
    )

    def get_versions(self, line) -> list[dict]:
        return VersionFiguresSerializer([cell for cell in line.cells if cell is not None], many=True).data


class WeekRejectionsSerializer(serializers.Serializer):
    week = serializers.DateField(help_text="Monday of the week the calls were judged.")
    reviewed = serializers.IntegerField()
    rejected = serializers.IntegerField()
    rejection_rate = serializers.FloatField(source="rate", allow_null=True)


class VersionsReportSerializer(serializers.Serializer):
    rubric = serializers.CharField(source="slug")
    versions = RubricVersionSerializer(many=True)
    criteria = CriterionLineSerializer(source="lines", many=True)
    weeks = WeekRejectionsSerializer(many=True)


@extend_schema(
    tags=["reports"],
    parameters=[query_parameter("rubric", VersionsFilterForm.base_fields["rubric"])],
    responses={200: VersionsReportSerializer, 400: BAD_REQUEST},
)
class VersionsReportView(APIView):
    """Each criterion across a rubric's versions, and the weekly rejection rate."""

    session_permissions = {"GET": Capability.READ_REPORTS}  # and any key

    def get(self, request: Request) -> Response:
        form = _valid(VersionsFilterForm(request.query_params, scope=scope_for_request(request)))
        report = versions_report(slug=form.cleaned_data["rubric"], scope=form.scope)
        return Response(VersionsReportSerializer(report).data)
