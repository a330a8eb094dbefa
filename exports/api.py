"""GET /api/export/{scores,reviews,disputes,calibration}/: a page of the kind's rows after a cursor, as
NDJSON (the default) or Parquet (`?format=parquet`, or `Accept: application/vnd.apache.parquet`).

The rows stream as they are read; the next page's cursor is in the `X-Export-Cursor` header (computed
before the first row is sent) and `X-Export-More` says whether rows remain below the watermark
(exports.selectors explains it). A key needs `can_export`; a person, the reports' capability, and gets
their own scope (a supervisor's teams) without the judge's values of calls blind to them.
"""

from __future__ import annotations

from django.http import Http404, StreamingHttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from access import Capability, is_api_key
from access.scope import scope_for_request
from core.api.schema import BAD_REQUEST
from exports.columns import KINDS
from exports.formats import MEDIA_TYPES, NDJSON, PARQUET, stream
from exports.selectors import MAX_LIMIT, DEFAULT_LIMIT, ExportUnavailable, cursor_parse, export_page, page_records
from reviews.selectors import blind_recordings_for


class NdjsonRenderer(BaseRenderer):
    media_type = MEDIA_TYPES[NDJSON]
    format = NDJSON
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return JSONRenderer().render(data) + b"\n"  # an error: one line


class ParquetRenderer(BaseRenderer):
    """Chosen by negotiation only: the page is streamed by the view, and an error is answered as JSON."""

    media_type = MEDIA_TYPES[PARQUET]
    format = PARQUET
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        raise NotImplementedError  # ExportView.handle_exception answers errors as JSON


class Unavailable(APIException):
    status_code = 503


def _limit(raw: str | None) -> int:
    if not raw:
        return DEFAULT_LIMIT
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_LIMIT):
        raise ValidationError({"limit": _("Give a whole number from 1 to %(maximum)d.") % {"maximum": MAX_LIMIT}})
    return int(raw)


class ExportView(APIView):
    session_permissions = {"GET": Capability.READ_REPORTS}
    key_permissions = {"GET": "can_export"}
    renderer_classes = [NdjsonRenderer, ParquetRenderer, JSONRenderer]
    pagination_class = None
    kind = ""

    def perform_content_negotiation(self, request: Request, force: bool = False):
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:  # DRF's answer to an unknown ?format=
            raise ValidationError({"format": _("Give ndjson or parquet.")}) from None

    def handle_exception(self, exc: Exception):
        # Errors are JSON whatever format was asked for (a Parquet error would be unreadable).
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), "application/json"
        return super().handle_exception(exc)

    @extend_schema(
        tags=["export"],
        parameters=[
            OpenApiParameter(
                "since_cursor",
                {"type": "string", "pattern": r"^[0-9]+-[0-9]+$"},
                description="The X-Export-Cursor of the previous page; none to start.",
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
                description=f"Rows at most (default {DEFAULT_LIMIT}).",
            ),
            OpenApiParameter("format", str, enum=["ndjson", "parquet"], description="Default ndjson, or by Accept."),
        ],
        responses={
            (200, MEDIA_TYPES[NDJSON]): OpenApiResponse(OpenApiTypes.STR, description="One row a line."),
            (200, MEDIA_TYPES[PARQUET]): OpenApiResponse(OpenApiTypes.BINARY, description="A Parquet file."),
            400: BAD_REQUEST,
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        since = cursor_parse(request.query_params.get("since_cursor"))
        limit = _limit(request.query_params.get("limit"))
        blind = None if is_api_key(request.auth) else blind_recordings_for(request.user)
        try:
            page = export_page(kind=self.kind, scope=scope_for_request(request), since=since, limit=limit, blind=blind)
        except ExportUnavailable as error:
            raise Unavailable(str(error)) from None
        format = PARQUET if request.accepted_renderer.format == PARQUET else NDJSON  # Accept: application/json too
        response = StreamingHttpResponse(
            stream(page_records(page), KINDS[self.kind], format), content_type=MEDIA_TYPES[format]
        )
        response["X-Export-Cursor"] = str(page.cursor)
        response["X-Export-More"] = "true" if page.more else "false"
        response["Content-Disposition"] = f'attachment; filename="{self.kind}-{since}.{format}"'
        response["Cache-Control"] = "no-store"
        return response


def export_view(kind: str):
    return type(f"{kind.title()}ExportView", (ExportView,), {"kind": kind}).as_view()
