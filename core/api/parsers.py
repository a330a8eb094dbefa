from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.serializers import Serializer


class JSONParser(parsers.JSONParser):
    """DRF's, except that JSON nested deeper than Python decodes is a 400 like
    any malformed body, not a 500 (a small body of "[[[[..." is enough)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(_("JSON parse error - nested too deeply.")) from None


def parse_with(serializer_class: type[Serializer], data: Any, **context: Any) -> Any:
    """The serializer's validated data; a ValidationError becomes the 400."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
