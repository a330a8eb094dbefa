"""GET /api/calls/?q=...: the calls list's search over the API, with the page's filters and rules.

For a person's session (who may read recordings); a blind call's judge values are never among what it
answers, and a filter on the judge's value leaves blind calls out (calls.selectors.call_search).
Keys are refused: a system reads its own calls at /api/recordings/.
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

from access import NO_KEY, Capability
from access.scope import scope_for
from core.api.schema import BAD_REQUEST
from calls.forms import CallFilterForm
from calls.selectors import COUNT_LIMIT, call_page, call_search, calls_visible, criterion_choices
from reviews.figures.api import query_parameter
from reviews.selectors import rubric_choices

API_PAGE_SIZE = 50


class CallSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="recording.pk")
    external_id = serializers.CharField(source="recording.external_id")
    source = serializers.CharField(source="recording.source")
    agent_id = serializers.CharField(source="recording.agent_id")
    agent_name = serializers.CharField(source="recording.agent_name")
    team = serializers.CharField(source="recording.team")
    rubric = serializers.CharField(source="recording.rubric.slug")
    rubric_version = serializers.IntegerField(source="recording.rubric.version")
    occurred_at = serializers.DateTimeField(source="recording.occurred_at", allow_null=True)
    status = serializers.CharField(source="recording.status")
    review_reasons = serializers.ListField(source="recording.review_reasons", child=serializers.CharField())
    assignee = serializers.CharField(source="assignee.username", allow_null=True, default=None)
    latest_decision = serializers.CharField(source="decision", allow_blank=True, help_text="The latest review's decision; empty without one.")
    headline = serializers.CharField(
        allow_null=True, help_text="With q: where the words were found, HTML-escaped, each found word in <mark>."
    )


class CallListSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text=f"The calls found, counted up to {COUNT_LIMIT}.")
    capped = serializers.BooleanField(help_text=f"True: {COUNT_LIMIT} calls or more were found; only those are paged.")
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    results = CallSerializer(many=True)


@extend_schema(
    tags=["calls"],
    parameters=[
        *(query_parameter(name, field) for name, field in CallFilterForm.base_fields.items()),
        query_parameter("page", forms.IntegerField(required=False, min_value=1)),
    ],
    responses={200: CallListSerializer, 400: BAD_REQUEST},
)
class CallListView(APIView):
    """Every judged call the user may see, latest first, 50 a page: the calls list's filters and search."""

    session_permissions = {"GET": Capability.READ_RECORDINGS}
    key_permissions = {"GET": NO_KEY}

    def get(self, request: Request) -> Response:
        visible = calls_visible(request.user)
        form = CallFilterForm(
            request.query_params,
            rubrics=rubric_choices(scope=scope_for(request.user)),
            criteria=criterion_choices(request.query_params.get("rubric", ""), scope=scope_for(request.user)),
        )
        page_number = request.query_params.get("page") or "1"  # sent empty: not given
        if not page_number.isdigit() or int(page_number) < 1:
            raise ValidationError({"page": ["A whole number from 1."]})
        if not form.is_valid():
            raise ValidationError(
                {
                    api_settings.NON_FIELD_ERRORS_KEY if field == NON_FIELD_ERRORS else field: list(messages)
                    for field, messages in form.errors.items()
                }
            )
        filters = form.filters()
        found = call_search(recordings=visible, filters=filters, user=request.user)
        page = call_page(recordings=found, filters=filters, number=int(page_number), size=API_PAGE_SIZE)
        return Response(
            CallListSerializer(
                {
                    "count": page.count,
                    "capped": page.capped,
                    "page": page.page.number,
                    "pages": page.page.paginator.num_pages,
                    "results": page.rows,
                }
            ).data
        )
