"""One posted recording's fields, checked with plain code: the single post's JSON body and every
item of a batch go through `recording_input`, so both accept and refuse exactly the same things.

DRF's serializer costs about 1 ms per recording (mostly copying its fields for each instance, and
a per-character loop over the transcript), a fifth of the batch endpoint's budget. These checks give
the same values and the same messages, DRF's own strings (so its translations too), as
`RecordingIngestSerializer`, which still describes the body in the OpenAPI schema and parses
multipart bodies (audio); tests/api/test_recording_input.py holds the two to the same answers.

Errors come in the API's shape (core.api.exceptions): one message per field, a dict per position or
sub-field for `turns` and `agent`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import fields, serializers
from rest_framework.settings import api_settings
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from access.scope import Scope
from core.errors import InvalidInputError
from qa.models import Recording
from qa.services import Turn
from rubrics.models import Rubric
from rubrics.selectors import rubric_latest_published

# Bounds of the columns the values go to: a longer value must be a 400, not a database error.
INT32_MAX = 2**31 - 1
# Recordings per batch request: 500 calls of 6 KB are about 3.5 MB of JSON, within QA_MAX_BODY_BYTES.
BATCH_MAX = 500
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
INTEGRAL = re.compile(r"\.0*\s*$")  # "12.0" is 12, as DRF reads it
NON_FIELD = api_settings.NON_FIELD_ERRORS_KEY

RubricLookup = Callable[[str], Rubric]
# Braces doubled: DRF formats error messages with str.format. The serializer's AgentField uses it too.
AGENT_INVALID = gettext_lazy('Send the agent as {{"id": ..., "name": ...}} or as a string id.')


class FieldError(Exception):
    """One field's error: a message, or a dict of them for a list or object field."""

    def __init__(self, error: str | dict) -> None:
        super().__init__(error)
        self.error = error


def _message(field_class: type[fields.Field], key: str, **values: Any) -> str:
    return str(field_class.default_error_messages[key]).format(**values)


def rubric_published(slug: str, scope: Scope) -> Rubric:
    """The latest published version of `slug` in `scope` (the request's: another workspace's rubric is
    no rubric); the serializer's field check and `recording_input` share it."""
    rubric = rubric_latest_published(slug=slug, scope=scope)
    if rubric is None:
        raise serializers.ValidationError(_("No published rubric '%(slug)s'.") % {"slug": slug})
    return rubric


def rubric_lookup(scope: Scope) -> RubricLookup:
    """`rubric_published` remembering its answers, for the items of one request."""
    found: dict[str, Rubric] = {}

    def lookup(slug: str) -> Rubric:
        if slug not in found:
            found[slug] = rubric_published(slug, scope)
        return found[slug]

    return lookup


def _text(
    value: Any,
    *,
    max_length: int | None = None,
    blank: bool = False,
    trim: bool = True,
    slug: bool = False,
    numbers: bool = False,
) -> str:
    """The serializer's StringField: only a string (DRF's CharField or SlugField with `numbers`: numbers
    become text); null, other types and (unless allowed) blank are refused; then every rule the text
    breaks, in DRF's order."""
    accepted = (str, int, float) if numbers else str
    if isinstance(value, bool) or not isinstance(value, accepted):
        raise FieldError(_message(fields.Field, "null") if value is None else _message(fields.CharField, "invalid"))
    text = str(value)
    if text == "" or (trim and text.strip() == ""):
        if not blank:
            raise FieldError(_message(fields.CharField, "blank"))
        return ""
    if trim:
        text = text.strip()
    messages = []
    if max_length is not None and len(text) > max_length:
        messages.append(_message(fields.CharField, "max_length", max_length=max_length))
    if "\x00" in text:
        messages.append(str(ProhibitNullCharactersValidator.message))
    try:
        text.encode()  # in C; UTF-8 refuses exactly the surrogates
    except UnicodeEncodeError as error:
        messages.append(str(ProhibitSurrogateCharactersValidator.message).format(code_point=ord(text[error.start])))
    if slug and not SLUG.match(text):
        messages.append(_message(fields.SlugField, "invalid"))
    if messages:
        raise FieldError(" ".join(messages))
    return text


def _integer(value: Any, *, max_value: int | None = None) -> int | None:
    """DRF's IntegerField with min_value=0, null allowed."""
    if value is None:
        return None
    if isinstance(value, str) and len(value) > fields.IntegerField.MAX_STRING_LENGTH:
        raise FieldError(_message(fields.IntegerField, "max_string_length"))
    try:
        number = int(INTEGRAL.sub("", str(value)))
    except (ValueError, TypeError):
        raise FieldError(_message(fields.IntegerField, "invalid")) from None
    if max_value is not None and number > max_value:
        raise FieldError(_message(fields.IntegerField, "max_value", max_value=max_value))
    if number < 0:
        raise FieldError(_message(fields.IntegerField, "min_value", min_value=0))
    return number


def _choice(value: Any, choices: list[str]) -> str:
    if value is None:
        raise FieldError(_message(fields.Field, "null"))
    if str(value) not in choices:
        raise FieldError(_message(fields.ChoiceField, "invalid_choice", input=value))
    return str(value)


# Time zones and formats as DRF reads them: delegated to its field, which holds no state.
_DATETIME = serializers.DateTimeField(allow_null=True)


def _datetime(value: Any) -> Any:
    try:
        return _DATETIME.run_validation(value)
    except serializers.ValidationError as error:
        raise FieldError(" ".join(str(message) for message in error.detail)) from None


def _slug(value: Any, lookup: RubricLookup) -> Rubric:
    slug = _text(value, max_length=100, slug=True, numbers=True)
    try:
        return lookup(slug)
    except serializers.ValidationError as error:
        raise FieldError(" ".join(str(message) for message in error.detail)) from None


def _object(value: Any, parse: Callable[[Mapping], Any]) -> Any:
    """A nested object: null, a non-object, or its own fields' errors (a dict of them)."""
    if value is None:
        raise FieldError(_message(fields.Field, "null"))
    if not isinstance(value, Mapping):
        raise FieldError(_message(serializers.Serializer, "invalid", datatype=type(value).__name__))
    return parse(value)


def _fields(data: Mapping, checks: dict[str, tuple[Callable[[Any], Any], bool]]) -> dict[str, Any]:
    """Each present field through its check, every error collected; (check, required) per field."""
    values, errors = {}, {}
    for name, (check, required) in checks.items():
        if name not in data:
            if required:
                errors[name] = _message(fields.Field, "required")
            continue
        try:
            values[name] = check(data[name])
        except FieldError as error:
            errors[name] = error.error
    if errors:
        raise FieldError(errors)
    return values


TURN_CHECKS = {
    "speaker": (lambda value: _text(value, max_length=100), True),
    "text": (lambda value: _text(value, trim=False), True),
    "start_ms": (_integer, False),
    "end_ms": (_integer, False),
}
AGENT_CHECKS = {
    "id": (lambda value: _text(value, max_length=100), True),
    "name": (lambda value: _text(value, max_length=200, blank=True), False),
}


def _turns(value: Any) -> list[Turn]:
    if value is None:
        raise FieldError(_message(fields.Field, "null"))
    if not isinstance(value, list):
        raise FieldError(_message(serializers.ListSerializer, "not_a_list", input_type=type(value).__name__))
    turns, errors = [], {}
    for index, item in enumerate(value):
        try:
            turns.append(Turn(**_object(item, lambda data: _fields(data, TURN_CHECKS))))
        except FieldError as error:
            errors[str(index)] = error.error
    if errors:
        raise FieldError(errors)
    return turns


def _agent(value: Any) -> tuple[str, str]:
    if isinstance(value, str):
        value = {"id": value}
    elif value is None:
        raise FieldError(_message(fields.Field, "null"))
    elif not isinstance(value, dict):
        raise FieldError(str(AGENT_INVALID).format())
    agent = _fields(value, AGENT_CHECKS)
    return agent["id"], agent.get("name", "")


def _audio(value: Any) -> None:
    # A JSON body cannot carry a file: audio comes as multipart/form-data.
    raise FieldError(_message(fields.Field, "null") if value is None else _message(fields.FileField, "invalid"))


def recording_checks(rubric: RubricLookup) -> dict[str, tuple[Callable[[Any], Any], bool]]:
    """Each field of RecordingIngestSerializer with its check and whether it is required."""
    return {
        "external_id": (lambda value: _text(value, max_length=200), True),
        "source": (lambda value: _text(value, max_length=100), False),
        "rubric": (lambda value: _slug(value, rubric), True),
        "agent": (_agent, False),
        "team": (lambda value: _text(value, max_length=100, blank=True), False),
        "channel": (lambda value: _choice(value, Recording.Channel.values), False),
        "language": (lambda value: _text(value, max_length=10, blank=True), False),
        "occurred_at": (_datetime, False),
        "duration_seconds": (lambda value: _integer(value, max_value=INT32_MAX), False),
        "transcript": (lambda value: _text(value, blank=True, trim=False), False),
        "turns": (_turns, False),
        "audio": (_audio, False),
        # Named as qa.audio.channel_name_check reads them, which the service applies.
        "agent_channel": (lambda value: _text(value, max_length=5, blank=True, numbers=True), False),
        "customer_channel": (lambda value: _text(value, max_length=5, blank=True, numbers=True), False),
        "transcript_source": (lambda value: _choice(value, Recording.TranscriptSource.values), False),
    }


def recording_input(data: Any, *, rubric: RubricLookup) -> dict[str, Any]:
    """The keyword arguments of `recording_ingest` from one recording's JSON object (without
    `source` when it was not sent); InvalidInputError with every bad field's message otherwise.

    `rubric` finds a slug's published rubric (`rubric_lookup()`), raising its ValidationError.
    """
    if data is None:
        raise InvalidInputError({NON_FIELD: "No data provided"})  # DRF's words, untranslated there too
    if not isinstance(data, Mapping):
        raise InvalidInputError(
            {NON_FIELD: _message(serializers.Serializer, "invalid", datatype=type(data).__name__)}
        )
    try:
        values = _fields(data, recording_checks(rubric))
    except FieldError as error:
        raise InvalidInputError(error.error) from None
    if "agent" in values:
        values["agent_id"], values["agent_name"] = values.pop("agent")
    return values
