"""Writes for recordings: ingest. Judging lives in qa.judging."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from qa.errors import InvalidInputError
from qa.evidence import parse_turns
from qa.judging import recording_enqueue_judging
from qa.models import Recording
from rubrics.models import Rubric


class RecordingConflictError(Exception):
    """The same external id was sent before with different content."""

    def __init__(self, recording: Recording) -> None:
        super().__init__(
            _("Recording %(source)s/%(external_id)s already exists with different content.")
            % {"source": recording.source, "external_id": recording.external_id}
        )
        self.recording = recording


def has_control_characters(value: str) -> bool:
    """Line breaks, NUL, escape sequences, invisible format characters (e.g. a right-to-left
    override): none belongs in an identifier, and each can forge a log line, break an export
    or make two ids look alike."""
    return any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in value)


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    start_ms: int | None = None
    end_ms: int | None = None


def turns_render(turns: list[Turn]) -> str:
    """The canonical verbatim text of structured turns: one `SPEAKER: text` line each.

    Evidence is verified against this text, so it must stay stable.
    """
    return "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns) + "\n"


def transcript_check_verbatim(transcript: str) -> None:
    """Refuse a text that is not a turn-by-turn record (a summary, a note).

    Uses the verifier's own parser, so what is accepted here is exactly what
    quotes will later be attributed against.
    """
    turns = parse_turns(transcript)
    if not turns:
        raise InvalidInputError({"transcript": _("The transcript is empty.")})
    if turns[0].speaker is None:
        raise InvalidInputError(
            {
                "transcript": _(
                    "The transcript has no speaker turns: each turn must be a line 'SPEAKER: text' "
                    "(a summary is not a verbatim record)."
                )
            }
        )


def turns_check(turns: list[Turn]) -> None:
    if not turns:
        raise InvalidInputError({"turns": _("At least one turn is needed.")})
    errors = {}
    for index, turn in enumerate(turns):
        if not turn.speaker.strip() or ":" in turn.speaker or "\n" in turn.speaker:
            errors[str(index)] = _("Each turn needs a speaker without ':' or line breaks.")
        elif not turn.text.strip():
            errors[str(index)] = _("Each turn needs a non-empty text.")
        elif turn.start_ms is not None and turn.end_ms is not None and turn.end_ms < turn.start_ms:
            errors[str(index)] = _("end_ms is before start_ms.")
    if errors:
        raise InvalidInputError({"turns": errors})


def _idempotency_content(
    *,
    transcript: str,
    rubric: Rubric,
    agent_id: str,
    agent_name: str,
    team: str,
    channel: str,
    language: str,
    occurred_at: datetime | None,
    duration_seconds: int | None,
) -> dict:
    """What makes two posts of one (source, external_id) the same recording: a resend with
    these equal answers 200, with any of them different 409.

    An explicit list, never "every field of the model", so that a field added to recordings
    later does not turn every resend of a stored call into a 409: the hash of a stored
    recording must stay what it was when it was stored. Add an entry only together with a
    migration that recomputes the stored hashes.
    """
    return {
        "transcript": transcript,  # verbatim (structured turns rendered to text; their timestamps are not compared)
        "rubric": [rubric.slug, rubric.version],  # the same call against a newer version is other content
        "agent": [agent_id, agent_name],
        "team": team,
        "channel": channel,
        "language": language,  # as sent, before the rubric's language fills a blank
        "occurred_at": occurred_at.isoformat() if occurred_at else None,
        "duration_seconds": duration_seconds,
    }


def _content_hash(fields: dict) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


@transaction.atomic
def recording_ingest(
    *,
    external_id: str,
    source: str,
    rubric: Rubric,
    transcript: str | None = None,
    turns: list[Turn] | None = None,
    agent_id: str = "",
    agent_name: str = "",
    team: str = "",
    channel: str = Recording.Channel.VOICE,
    language: str = "",
    occurred_at: datetime | None = None,
    duration_seconds: int | None = None,
    transcript_source: str = Recording.TranscriptSource.IMPORT,
    judge: bool = True,
) -> tuple[Recording, bool]:
    """Store a recording and (unless judge=False) enqueue its judgment; return it and whether it is new.

    judge=False leaves it `received` with no run, for `manage.py judge --pending`
    to pick up (the sample loader uses it to keep a first run short).

    Idempotent on (source, external_id): the same content again returns the
    stored recording; different content raises RecordingConflictError.
    """
    if not external_id.strip():
        raise InvalidInputError({"external_id": _("external_id may not be blank.")})
    for field, value in (("external_id", external_id), ("source", source)):
        if has_control_characters(value):
            raise InvalidInputError(
                {field: _("%(field)s may not contain control characters (line breaks, tabs, NUL...).") % {"field": field}}
            )
    if (transcript is None) == (turns is None):
        raise InvalidInputError({"transcript": _("Send either 'transcript' or 'turns', not both and not neither.")})
    if turns is not None:
        turns_check(turns)
        transcript = turns_render(turns)
    transcript_check_verbatim(transcript)
    if rubric.status != Rubric.Status.PUBLISHED:
        raise InvalidInputError({"rubric": _("Rubric %(slug)s has no published version.") % {"slug": rubric.slug}})
    if occurred_at is not None and occurred_at > timezone.now():
        raise InvalidInputError({"occurred_at": _("occurred_at is in the future.")})

    content = _idempotency_content(
        transcript=transcript,
        rubric=rubric,
        agent_id=agent_id,
        agent_name=agent_name,
        team=team,
        channel=channel,
        language=language,
        occurred_at=occurred_at,
        duration_seconds=duration_seconds,
    )
    content_hash = _content_hash(content)
    existing = Recording.objects.filter(source=source, external_id=external_id).first()
    if existing is not None:
        return _same_or_conflict(existing, content_hash), False

    try:
        # A savepoint, so that losing a race to a concurrent identical post
        # leaves this transaction usable for the lookup below.
        with transaction.atomic():
            recording = Recording.objects.create(
                external_id=external_id,
                source=source,
                rubric=rubric,
                transcript=transcript,
                turns=[vars(turn) for turn in turns] if turns is not None else None,
                agent_id=agent_id,
                agent_name=agent_name,
                team=team,
                channel=channel,
                language=language or rubric.language,
                occurred_at=occurred_at,
                duration_seconds=duration_seconds,
                transcript_source=transcript_source,
                content_hash=content_hash,
            )
    except IntegrityError:
        existing = Recording.objects.get(source=source, external_id=external_id)
        return _same_or_conflict(existing, content_hash), False
    if judge:
        recording_enqueue_judging(recording=recording)
    return recording, True


def _same_or_conflict(existing: Recording, content_hash: str) -> Recording:
    if existing.content_hash != content_hash:
        raise RecordingConflictError(existing)
    return existing
