"""The API's shared pieces for figures: the rubric a figure is of, and a form field as a query parameter."""

from __future__ import annotations

from django import forms
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers


class RubricSerializer(serializers.Serializer):
    slug = serializers.CharField()
    version = serializers.IntegerField()
    name = serializers.CharField()


def query_parameter(name: str, field: forms.Field) -> OpenApiParameter:
    """The query parameter a form field reads, with the bounds the form enforces: a required one is
    not empty, a fixed set of choices is an enum, a text has its maximum length."""
    integer = isinstance(field, forms.IntegerField) or getattr(field, "coerce", None) is int
    schema = {"type": "integer"} if integer else {"type": "string"}
    if isinstance(field, forms.DateField):
        schema["format"] = "date"
    if isinstance(field, forms.CharField) and field.max_length:
        schema["maxLength"] = field.max_length
    if isinstance(field, forms.ChoiceField) and field.choices:  # the rubrics' and versions' are filled per request
        schema["enum"] = [value for value, _label in field.choices if value != ""]
    if field.required and schema["type"] == "string":
        schema["minLength"] = 1
    return OpenApiParameter(name, schema, required=field.required, description=field.help_text or field.label)
