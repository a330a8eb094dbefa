"""GET /api/scorecards/?rubric=SLUG&group=team|agent&since=&until=: the scorecard's cells.

Each cell carries the three numbers side by side (the judge's mean over its verified
values, the audited calls' human mean, the estimate) and the estimate's 95% interval.
"""

from __future__ import annotations

from typing import Any

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
from reviews.figures.stats import CorrectionLevel, Estimate
from reviews.filters import ReportFilters
from insights.scorecards.forms import ScorecardAPIForm
from insights.scorecards.freshness import rollups_as_of
from insights.scorecards.selectors import OVERALL, scorecard


class CellSerializer(serializers.Serializer):
    criterion_key = serializers.CharField(help_text=f"A criterion's key, or '{OVERALL}' (0–100, last).")
    judged_n = serializers.IntegerField(
        help_text="Judged calls whose value exists: a value (the judge's N/A left out) whose quote verified."
    )
    unverified_n = serializers.IntegerField(
        help_text="Judge values whose quote did not verify: no value, never counted as the judge's."
    )
    known_n = serializers.IntegerField(
        help_text="Calls counted with their human value (a final review, a calibration's agreed value)."
    )
    estimated_n = serializers.IntegerField(
        help_text="Calls without a human value, estimated from their verified judge value and the audit."
    )
    waiting_n = serializers.IntegerField(
        help_text="Calls with an unverified judge value and no human value yet: left out of the estimate."
    )
    audited_n = serializers.IntegerField(help_text="The cell's random-audit calls with a final human value.")
    judge_mean = serializers.FloatField(
        allow_null=True, help_text="The naive mean of the judge's verified values; null when there are none."
    )
    human_audit_mean = serializers.FloatField(allow_null=True, help_text="The mean human value of the audited calls.")
    estimate = serializers.FloatField(
        allow_null=True,
        help_text=(
            "The estimated mean human value: known human values, and per stratum (flagged, plain) the rest's "
            "verified judge values corrected by that stratum's audit, combined by their counts; uncorrected, "
            "the judge's values as they are."
        ),
    )
    ci = serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="The estimate's 95% interval [low, high]; null when uncorrected.",
    )
    corrected = serializers.BooleanField(
        help_text="False: too few audited calls, even pooled, for a correction; the estimate is the judge's mean."
    )
    correction_level = serializers.ChoiceField(
        choices=list(CorrectionLevel),
        allow_null=True,
        help_text="Whose audited calls corrected the cell: its own, its team's or the rubric's (pooled).",
    )
    power_tuned = serializers.BooleanField(
        help_text="True: a correction had 100 audited calls or more and was power-tuned (PPI++)."
    )


class RowSerializer(serializers.Serializer):
    team = serializers.CharField()
    agent_id = serializers.CharField(allow_null=True, help_text="Null on a team's row.")
    agent_name = serializers.CharField(allow_null=True)
    criteria = CellSerializer(many=True)


class PeriodSerializer(serializers.Serializer):
    since = serializers.DateField(allow_null=True)
    until = serializers.DateField(allow_null=True)


class AsOfSerializer(serializers.Serializer):
    """Figures read from rollups that Celery beat brings up to date every minute (`insights.scorecards.freshness`)."""

    at = serializers.DateTimeField(help_text="Every change committed before this time is in the figures.")
    behind = serializers.IntegerField(help_text="Calls judged or reviewed since, counted at the next refresh.")


# Null when the figures hold every change. The views fill it in (`as_of_data`): a report has no such field.
AS_OF_FIELD = {"allow_null": True, "read_only": True, "default": None, "help_text": "How fresh the figures are."}


def as_of_data(filters: ReportFilters) -> dict[str, Any] | None:
    # A source-bound key's figures are read from its calls, never from the rollups (reports.selectors.rollups_for).
    if filters.scope is not None and filters.scope.by_source:
        return None
    as_of = rollups_as_of(rubric=filters.rubric)
    return AsOfSerializer(as_of).data if as_of is not None else None


class ScorecardSerializer(serializers.Serializer):
    rubric = RubricSerializer()
    period = PeriodSerializer()
    as_of = AsOfSerializer(**AS_OF_FIELD)
    rows = RowSerializer(many=True)


@extend_schema(
    tags=["scorecards"],
    parameters=[query_parameter(name, field) for name, field in ScorecardAPIForm.base_fields.items()],
    responses={200: ScorecardSerializer, 400: BAD_REQUEST},
)
class ScorecardView(APIView):
    """Per team or agent, per criterion and overall: the human values known, the rest estimated from the judge's
    verified values corrected by the random audit."""

    session_permissions = {"GET": Capability.READ_REPORTS}  # and any key

    def get(self, request: Request) -> Response:
        form = ScorecardAPIForm(request.query_params, scope=scope_for_request(request))
        if not form.is_valid():
            raise ValidationError(
                {
                    api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field: list(messages)
                    for field, messages in form.errors.items()
                }
            )
        filters = form.filters()
        card = scorecard(filters)
        team_rows = form.cleaned_data["group"] == "team"
        rows = [
            {
                "team": row.team,
                "agent_id": row.agent_id,
                "agent_name": row.agent_name,
                "criteria": [
                    {"criterion_key": column.key, **_cell(cell)}
                    for column, cell in zip(card.columns, row.cells, strict=True)
                ],
            }
            for row in card.rows
            if (row.agent_id is None) == team_rows
        ]
        period = PeriodSerializer({"since": filters.date_from, "until": filters.date_to}).data
        rubric = RubricSerializer(filters.rubric).data
        return Response({"rubric": rubric, "period": period, "as_of": as_of_data(filters), "rows": rows})


# The cells' fields as the schema states them. The cells are JSON-ready already (numbers, booleans, a
# list, a string choice), so they are not run through CellSerializer one by one: for 2,700 cells that
# cost a sixth of the request (the schema test checks the answers against the schema).
CELL_FIELDS = [name for name in CellSerializer().fields if name != "criterion_key"]


def _cell(cell: Estimate) -> dict[str, Any]:
    values = {name: getattr(cell, name) for name in CELL_FIELDS}
    return values | {"ci": list(cell.ci) if cell.ci else None}
