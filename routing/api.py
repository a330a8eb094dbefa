"""The routing guarantee over the API: GET /api/rubrics/{slug}/routing/, per criterion the certified threshold,
the agreement it guarantees, its coverage and the audited pairs behind it (the table the rubric's admin page and
`routing_certify` show)."""

from __future__ import annotations

from django.urls import path
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from access import Capability
from access.scope import scope_for_request
from routing.selectors import routing_table
from rubrics.api import BAD_REQUEST, NOT_FOUND, RubricQuerySerializer
from rubrics.models import Rubric
from rubrics.selectors import rubric_version_of


class RoutingRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    judge = serializers.CharField(source="judge_name", help_text=_("The judge's name; empty for the environment's judge."))
    model = serializers.CharField()
    prompt_version = serializers.CharField()
    day = serializers.DateField(allow_null=True, help_text=_("The day the certificate was computed (frozen for that day)."))
    certified = serializers.BooleanField()
    threshold = serializers.FloatField(help_text=_("The certified threshold; the rubric's fixed one where none is certified."))
    guaranteed_agreement = serializers.FloatField(
        allow_null=True, help_text=_("The exact lower bound on the kept values' agreement, at least the target.")
    )
    coverage = serializers.FloatField(allow_null=True, help_text=_("The share of audited values that skip review."))
    pairs = serializers.IntegerField(help_text=_("Audited pairs (random audit only) behind the certificate."))
    kept = serializers.IntegerField()
    agreeing = serializers.IntegerField()
    more_pairs_needed = serializers.IntegerField(
        help_text=_("How many more audited pairs before even perfect agreement could certify a threshold.")
    )


class RoutingSerializer(serializers.Serializer):
    slug = serializers.SlugField(source="rubric.slug")
    version = serializers.IntegerField(source="rubric.version")
    target = serializers.FloatField(help_text=_("α: the agreement promised for values that skip review."))
    risk = serializers.FloatField(help_text=_("δ: the chance the promise does not hold."))
    tolerance = serializers.ChoiceField(choices=Rubric.AgreementTolerance.choices)
    fixed_threshold = serializers.FloatField()
    criteria = RoutingRowSerializer(source="rows", many=True)


class RubricRoutingView(GenericAPIView):
    serializer_class = RoutingSerializer
    session_permissions = {"GET": Capability.READ_RUBRICS}

    @extend_schema(
        tags=["rubrics"],
        parameters=[RubricQuerySerializer],
        responses={200: RoutingSerializer, 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("Per criterion, the routing threshold the random audit certified and what it guarantees"),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = RubricQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rubric = rubric_version_of(slug=slug, version=query.validated_data.get("version"), scope=scope_for_request(request))
        if rubric is None:
            raise NotFound()
        return Response(self.get_serializer(routing_table(rubric=rubric)).data)


# Composed by config/urls.py under the `api` namespace.
urlpatterns = [path("rubrics/<slug:slug>/routing/", RubricRoutingView.as_view(), name="rubric-routing")]
