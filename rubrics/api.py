"""The published rubrics over the API: GET /api/rubrics/, /api/rubrics/{slug}/ and
/api/rubrics/{slug}/lint/.

Authentication, permissions, pagination and the error body come from the REST framework
settings; the error components are referred to by name (`Error`, `ValidationError`:
always in the schema), since this layer sits below the API's plumbing in `qa.api`.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.urls import path
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from access import Capability
from rubrics.lint import Severity, rubric_lint
from rubrics.models import Criterion, CriterionException, Rubric, Section
from rubrics.selectors import rubric_detail, rubric_list_current, rubric_version_of

INT32_MAX = 2**31 - 1  # the version column's bound: a larger number must be a 400, not a database error

BAD_REQUEST = OpenApiResponse(
    {"$ref": "#/components/schemas/ValidationError"}, description=_("Bad input, one message per field.")
)
NOT_FOUND = OpenApiResponse({"$ref": "#/components/schemas/Error"}, description=_("No such object."))
NO_PAGE = OpenApiResponse({"$ref": "#/components/schemas/Error"}, description=_("No such page."))


class RubricQuerySerializer(serializers.Serializer):
    version = serializers.IntegerField(
        min_value=1,
        max_value=INT32_MAX,
        required=False,
        help_text=_("A version number; default: the latest published."),
    )


class CriterionExceptionSerializer(serializers.ModelSerializer):
    class Meta:
        model = CriterionException
        fields = ["text", "outcome"]


class CriterionSerializer(serializers.ModelSerializer):
    exceptions = CriterionExceptionSerializer(many=True)
    section = serializers.SlugRelatedField(slug_field="key", read_only=True, allow_null=True)

    class Meta:
        model = Criterion
        fields = [
            "key", "title", "description", "evidence_guidance", "scale_min", "scale_max", "weight", "replaces", "subject",
            "section", "critical", "fail_at", "exceptions",
        ]  # fmt: skip


class SectionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Section
        fields = ["key", "title", "weight"]


class RubricSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = Rubric
        fields = ["slug", "name", "language", "version", "status", "published_at"]


class RubricVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Rubric
        fields = ["version", "status", "published_at"]


class RubricDetailSerializer(RubricSummarySerializer):
    sections = SectionSerializer(many=True)
    criteria = CriterionSerializer(many=True)
    versions = RubricVersionSerializer(source="all_versions", many=True)

    class Meta(RubricSummarySerializer.Meta):
        fields = [
            *RubricSummarySerializer.Meta.fields, "description", "auto_fail", "not_applicable", "route_auto_fail",
            "sections", "criteria", "versions",
        ]  # fmt: skip


@extend_schema(tags=["rubrics"])
class RubricsView(GenericAPIView):
    serializer_class = RubricSummarySerializer
    session_permissions = {"GET": Capability.READ_RUBRICS}

    @extend_schema(
        responses={200: RubricSummarySerializer(many=True), 400: BAD_REQUEST, 404: NO_PAGE},
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
    session_permissions = {"GET": Capability.READ_RUBRICS}

    @extend_schema(
        parameters=[RubricQuerySerializer],
        responses={200: RubricDetailSerializer, 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("A rubric version with its criteria, and the list of its versions"),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = RubricQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            rubric = rubric_detail(slug=slug, version=query.validated_data.get("version"))
        except Rubric.DoesNotExist:
            raise NotFound() from None
        return Response(self.get_serializer(rubric).data)


class FindingSerializer(serializers.Serializer):
    """A rubrics.lint.Finding."""

    severity = serializers.ChoiceField(choices=Severity.choices)
    rule = serializers.CharField()
    criterion = serializers.CharField(help_text=_("The criterion's key; empty for the rubric as a whole."))
    message = serializers.CharField(help_text=_("In the request's language (Accept-Language: es or en)."))


class RubricLintSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Rubric.Status.choices)
    publishable = serializers.BooleanField(help_text=_("No errors: publishing a draft is allowed."))
    findings = FindingSerializer(many=True)


class RubricLintQuerySerializer(serializers.Serializer):
    version = serializers.IntegerField(
        min_value=1,
        max_value=INT32_MAX,
        required=False,
        help_text=_("A version number; default: the latest published, or the draft when none is."),
    )


@extend_schema(tags=["rubrics"])
class RubricLintView(GenericAPIView):
    serializer_class = RubricLintSerializer
    # The rubric owners' check of their wording (keys may read it too).
    session_permissions = {"GET": Capability.EDIT_RUBRICS}

    @extend_schema(
        parameters=[RubricLintQuerySerializer],
        responses={200: RubricLintSerializer, 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("What the lint finds in a rubric version's wording"),
    )
    def get(self, request: Request, slug: str) -> Response:
        query = RubricLintQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rubric = rubric_version_of(slug=slug, version=query.validated_data.get("version"))
        if rubric is None:
            raise NotFound()
        findings = rubric_lint(rubric)
        result = {
            "slug": rubric.slug,
            "version": rubric.version,
            "status": rubric.status,
            "publishable": not any(finding.is_error for finding in findings),
            "findings": findings,
        }
        return Response(self.get_serializer(result).data)


# Composed by config/urls.py under the `api` namespace.
urlpatterns = [
    path("rubrics/", RubricsView.as_view(), name="rubric-list"),
    path("rubrics/<slug:slug>/", RubricDetailView.as_view(), name="rubric-detail"),
    path("rubrics/<slug:slug>/lint/", RubricLintView.as_view(), name="rubric-lint"),
]
