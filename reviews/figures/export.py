"""The one CSV writer of every export: it opens right in the spreadsheets supervisors use, and runs nothing.

- A UTF-8 byte order mark first, so Excel reads the accents as UTF-8.
- In a language that writes decimal commas (Spanish), `;` between fields and decimal commas, as
  Excel in that language expects; elsewhere `,` and points. `?sep=;` or `?sep=,` chooses explicitly.
- Formula injection (OWASP "CSV Injection"): a text cell starting with `=`, `+`, `-`, `@`, a tab
  or a carriage return gets a leading apostrophe, so a spreadsheet shows it as text instead of
  evaluating it. Transcripts' quotes, comments, team and model names come from outside; numbers
  are written as numbers and never prefixed, so a negative bias stays a number.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.formats import get_format
from django.utils.translation import gettext as _

BOM = "\ufeff"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class CsvStyle:
    delimiter: str
    decimal: str


STYLES = {",": CsvStyle(",", "."), ";": CsvStyle(";", ",")}


class UnknownSeparatorError(ValueError):
    pass


def csv_style(request: HttpRequest) -> CsvStyle:
    """The separator asked for with ?sep=, else the one that goes with the language's decimal mark."""
    asked = request.GET.get("sep")
    if asked is not None:
        if asked not in STYLES:
            raise UnknownSeparatorError(
                _("Unknown separator '%(sep)s'; use one of: %(choices)s.") % {"sep": asked, "choices": " ".join(STYLES)}
            )
        return STYLES[asked]
    return STYLES[";"] if get_format("DECIMAL_SEPARATOR") == "," else STYLES[","]


def csv_cell(value: Any, style: CsvStyle) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return str(value).replace(".", style.decimal)
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def csv_download(
    request: HttpRequest, filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> HttpResponse:
    """The answer to ?format=csv: the file in the style the request asks for, or a 400 naming a bad ?sep=."""
    try:
        style = csv_style(request)
    except UnknownSeparatorError as error:
        return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
    return csv_response(filename, header, rows, style=style)


def csv_response(
    filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]], *, style: CsvStyle
) -> StreamingHttpResponse:
    """Streamed, so a drill-down of many thousand scores never sits in memory."""

    class Echo:
        def write(self, value: str) -> str:
            return value

    writer = csv.writer(Echo(), delimiter=style.delimiter)

    def body() -> Iterator[str]:
        yield BOM
        for row in chain([header], rows):
            yield writer.writerow([csv_cell(value, style) for value in row])

    response = StreamingHttpResponse(body(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
