"""Experiments over the API: POST /api/experiments/ creates one (rubric owners'
keys only), GET /api/experiments/{id}/ returns its progress and comparison."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access import Capability
from access.scope import scope_for_request
from core.api.schema import BAD_REQUEST, NOT_FOUND
from core.errors import InvalidInputError
from access.models import ApiKey
from qa.models import Judge
from experiments.models import Experiment
from experiments.selectors import EXPERIMENT_GROUPS, Comparison, experiment_comparison, experiments_list
from experiments.services import ArmSpec, experiment_create
from reviews.filters import Group


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Calls judged.")
    failed = serializers.IntegerField(help_text="Calls that failed after the production retry rules.")
    total = serializers.IntegerField()


class SplitFiguresSerializer(serializers.Serializer):
    """An arm's figures on part of its scores (reviews.figures.stats.Agreement, its model side named `mean`)."""

    n = serializers.IntegerField()
    mean = serializers.FloatField(source="model_mean", allow_null=True)
    bias = serializers.FloatField(allow_null=True)
    mae = serializers.FloatField(allow_null=True)
    exact_agreement = serializers.FloatField(allow_null=True)
    within_one = serializers.FloatField(allow_null=True)
    qwk = serializers.FloatField(allow_null=True)


class CriterionFiguresSerializer(serializers.Serializer):
    criterion_key = serializers.CharField()
    n = serializers.IntegerField(help_text="Recordings with a value from both this arm and the supervisor.")
    mean = serializers.FloatField(allow_null=True)
    bias = serializers.FloatField(allow_null=True, help_text="Mean of arm − supervisor.")
    mae = serializers.FloatField(allow_null=True)
    exact_agreement = serializers.FloatField(allow_null=True)
    within_one = serializers.FloatField(allow_null=True)
    qwk = serializers.FloatField(allow_null=True)
    unverified_rate = serializers.FloatField(allow_null=True)
    not_applicable_rate = serializers.FloatField(allow_null=True)
    stability = serializers.FloatField(allow_null=True, help_text="Share of stable scores; null with one sample.")
    verified = SplitFiguresSerializer(help_text="The same figures on the arm's scores whose quote verified.")
    unverified = SplitFiguresSerializer(help_text="The same figures on the arm's scores whose quote did not verify.")


class TokensSerializer(serializers.Serializer):
    prompt = serializers.IntegerField(source="prompt_tokens")
    completion = serializers.IntegerField(source="completion_tokens")
    cached = serializers.IntegerField(source="cached_tokens", help_text="Of the prompt tokens, those the server had cached.")


class ArmSerializer(serializers.Serializer):
    label = serializers.CharField()
    rubric_version = serializers.IntegerField()
    judge = serializers.CharField(help_text='A judge\'s name, or "environment" for the zero-configuration judge.')
    model = serializers.CharField()
    samples = serializers.IntegerField()
    tokens = TokensSerializer(source="*")
    cost = serializers.DecimalField(max_digits=14, decimal_places=6, allow_null=True, coerce_to_string=False)
    cost_per_call = serializers.DecimalField(
        max_digits=18, decimal_places=8, allow_null=True, coerce_to_string=False,
        help_text="The cost over the calls that reported their tokens; null without prices.",
    )
    criteria = CriterionFiguresSerializer(many=True)


class DeltaSerializer(serializers.Serializer):
    arm = serializers.CharField()
    criterion_key = serializers.CharField()
    mae_delta = serializers.FloatField(source="delta.mae_delta", allow_null=True, help_text="Candidate − baseline.")
    mae_delta_ci = serializers.ListField(
        source="delta.mae_delta_ci", child=serializers.FloatField(), allow_null=True, min_length=2, max_length=2
    )
    qwk_delta = serializers.FloatField(source="delta.qwk_delta", allow_null=True)
    qwk_delta_ci = serializers.ListField(
        source="delta.qwk_delta_ci", child=serializers.FloatField(), allow_null=True, min_length=2, max_length=2
    )
    verdict = serializers.ChoiceField(choices=["better", "worse", "no_difference", "no_reference"])


class ExperimentSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="experiment.pk")
    status = serializers.ChoiceField(choices=Experiment.Status.choices, source="experiment.status")
    progress = ProgressSerializer()
    recordings = serializers.ListField(
        source="experiment.recording_ids", child=serializers.IntegerField(), help_text="The frozen set's recording ids."
    )
    arms = ArmSerializer(many=True)
    comparison = DeltaSerializer(many=True, source="deltas")


class ExperimentSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    status = serializers.ChoiceField(choices=Experiment.Status.choices)
    rubric = serializers.CharField(source="rubric_slug")
    created_at = serializers.DateTimeField()


class JudgeNameField(serializers.SlugRelatedField):
    def to_internal_value(self, data: object) -> Judge:
        # PostgreSQL refuses a NUL in a text lookup (a DataError, so a 500): such a name names no judge.
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", "\\0"))
        return super().to_internal_value(data)


class ArmInputSerializer(serializers.Serializer):
    rubric_version = serializers.IntegerField(required=False, allow_null=True, help_text="Default: the published one.")
    judge = JudgeNameField(
        slug_field="name",
        queryset=Judge.objects.all(),
        required=False,
        allow_null=True,
        help_text="A judge's name; default: production's.",
    )
    samples = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=Judge.MAX_SAMPLES)
    stored = serializers.BooleanField(default=False, help_text="Baseline only: production's scores as stored.")


class ExperimentInputSerializer(serializers.Serializer):
    rubric = serializers.SlugField()
    candidates = ArmInputSerializer(many=True)
    baseline = ArmInputSerializer(required=False, help_text="Default: production's scores as stored (no LLM call).")
    group = serializers.ChoiceField(choices=EXPERIMENT_GROUPS, default=Group.ALL.value)
    since = serializers.DateField(required=False, allow_null=True)
    until = serializers.DateField(required=False, allow_null=True)
    limit = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    seed = serializers.IntegerField(default=0)


def _comparison_body(comparison: Comparison) -> dict:
    return ExperimentSerializer(comparison).data


@extend_schema(tags=["experiments"])
class ExperimentsView(APIView):
    # Reading: any key, or a person who may read experiments. Writing: a rubric owner or their key.
    session_permissions = {"GET": Capability.READ_EXPERIMENTS, "POST": Capability.RUN_EXPERIMENTS}
    key_permissions = {"POST": "can_run_experiments"}

    @extend_schema(responses=ExperimentSummarySerializer(many=True), summary="List experiments")
    def get(self, request: Request) -> Response:
        return Response(ExperimentSummarySerializer(experiments_list(scope=scope_for_request(request))[:200], many=True).data)

    @extend_schema(
        request=ExperimentInputSerializer,
        responses={201: ExperimentSerializer, 400: BAD_REQUEST},
        summary="Create an experiment (rubric owners' keys only)",
    )
    def post(self, request: Request) -> Response:
        data = ExperimentInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data

        def spec(arm: dict) -> ArmSpec:
            return ArmSpec(
                rubric_version=arm.get("rubric_version"),
                judge=arm.get("judge"),
                samples=arm.get("samples"),
                stored=arm.get("stored", False),
            )

        try:
            experiment = experiment_create(
                rubric_slug=fields["rubric"],
                candidates=[spec(arm) for arm in fields["candidates"]],
                baseline=spec(fields["baseline"]) if "baseline" in fields else ArmSpec(stored=True),
                group=fields["group"],
                date_from=fields.get("since"),
                date_to=fields.get("until"),
                limit=fields.get("limit"),
                seed=fields["seed"],
                user=request.user if request.user.is_authenticated else None,
                api_key=request.auth if isinstance(request.auth, ApiKey) else None,
            )
        except InvalidInputError as error:
            return Response(error.errors, status=status.HTTP_400_BAD_REQUEST)
        return Response(_comparison_body(experiment_comparison(experiment)), status=status.HTTP_201_CREATED)


@extend_schema(tags=["experiments"])
class ExperimentDetailView(APIView):
    # Reading: any key, or a person who may read experiments. Writing: a rubric owner or their key.
    session_permissions = {"GET": Capability.READ_EXPERIMENTS, "POST": Capability.RUN_EXPERIMENTS}
    key_permissions = {"POST": "can_run_experiments"}

    @extend_schema(
        responses={200: ExperimentSerializer, 404: NOT_FOUND}, summary="An experiment's progress and comparison"
    )
    def get(self, request: Request, pk: int) -> Response:
        experiment = get_object_or_404(experiments_list(scope=scope_for_request(request)), pk=pk)
        return Response(_comparison_body(experiment_comparison(experiment)))


