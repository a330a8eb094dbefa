"""Writes for recordings: ingest, and the enqueueing of their transcription. Judging lives in qa.judging."""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.core.files import File
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from kombu.exceptions import OperationalError
from rest_framework.reverse import reverse

from access.models import Team, has_control_characters
from core.errors import ConflictError, InvalidInputError
from core.queue import task_publish
from qa.audio import audio_inspect, channel_map_check, channel_name_check
from qa.evidence import parse_turns
from qa.judging import judge_run_publish
from qa.models import Judge, JudgeRun, Recording, Score, Transcription, audio_folder
from qa.quality import judge_value, judge_values_quality
from rubrics.models import Rubric
from rubrics.quality import QualityPolicy
from rubrics.quality import Value as QualityValue
from rubrics.selectors import rubric_quality_policy

logger = logging.getLogger(__name__)

# A stored file younger than this may be an ingest's whose transaction has not committed yet.
AUDIO_ORPHAN_GRACE = timedelta(hours=1)


class RecordingConflictError(ConflictError):
    """The same external id was sent before with different content."""

    def __init__(self, recording: Recording) -> None:
        super().__init__(
            _("Recording %(source)s/%(external_id)s already exists with different content.")
            % {"source": recording.source, "external_id": recording.external_id}
        )
        self.recording = recording

    def body(self, request: Any) -> dict[str, Any]:
        url = reverse("api:recording-detail", kwargs={"pk": self.recording.pk}, request=request)
        return {**super().body(request), "recording": {"id": self.recording.pk, "url": url}}


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


def transcript_check_size(*, transcript: str | None, turns: list[Turn] | None) -> None:
    """Refuse a transcript longer than the longest call the audio limit admits (QA_MAX_TRANSCRIPT_CHARS,
    QA_MAX_TRANSCRIPT_TURNS), before anything parses it: the body limit is sized for batches, so
    without this one post could store (and send to the judge) 70 hours of talk."""
    max_chars, max_turns = settings.QA_MAX_TRANSCRIPT_CHARS, settings.QA_MAX_TRANSCRIPT_TURNS
    field = "turns" if turns is not None else "transcript"
    count = len(turns) if turns is not None else (transcript or "").count("\n") + 1  # a line per turn
    if count > max_turns:
        raise InvalidInputError(
            {field: _("The transcript has %(count)s turns; the limit is %(max)s (QA_MAX_TRANSCRIPT_TURNS).")
             % {"count": count, "max": max_turns}}
        )  # fmt: skip
    # Structured turns are counted as they will be stored: rendered, one "SPEAKER: text" line each.
    chars = sum(len(turn.speaker) + len(turn.text) + 3 for turn in turns) if turns is not None else len(transcript or "")
    if chars > max_chars:
        raise InvalidInputError(
            {field: _("The transcript has %(count)s characters; the limit is %(max)s (QA_MAX_TRANSCRIPT_CHARS).")
             % {"count": chars, "max": max_chars}}
        )  # fmt: skip


def _breaks_line(text: str) -> bool:
    """Whether `text` holds a line or paragraph break, or another control character but a tab: rendered
    (`turns_render`), any of them could start a line that reads as another speaker's turn."""
    return any(char != "\t" and unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in text)


def turns_check(turns: list[Turn], *, duration_seconds: int | None = None) -> None:
    """Each turn is one speaker's line. Its text may not break the line: rendered, "hola\nAGENTE: ..."
    would be read back as an agent's turn, and the customer's words would verify for an agent criterion.
    It is refused rather than joined into one line, so that the stored text is the one sent: a client
    sends a message of several lines as several turns. Its times lie within the call (its duration and
    a second, or QA_AUDIO_MAX_SECONDS, the longest call taken, when it names none)."""
    if not turns:
        raise InvalidInputError({"turns": _("At least one turn is needed.")})
    limit_ms = ((duration_seconds + 1) if duration_seconds is not None else settings.QA_AUDIO_MAX_SECONDS) * 1000
    errors = {}
    for index, turn in enumerate(turns):
        if not turn.speaker.strip() or ":" in turn.speaker or has_control_characters(turn.speaker):
            errors[str(index)] = _("Each turn needs a speaker without ':' or line breaks.")
        elif not turn.text.strip():
            errors[str(index)] = _("Each turn needs a non-empty text.")
        elif _breaks_line(turn.text):
            errors[str(index)] = _(
                "A turn's text may not contain line breaks or control characters (they would start another "
                "speaker's turn): send each line as its own turn."
            )
        elif turn.start_ms is not None and turn.end_ms is not None and turn.end_ms < turn.start_ms:
            errors[str(index)] = _("end_ms is before start_ms.")
        elif any(time is not None and time > limit_ms for time in (turn.start_ms, turn.end_ms)):
            errors[str(index)] = _("start_ms and end_ms must lie within the call: at most %(max)s ms.") % {"max": limit_ms}
    if errors:
        raise InvalidInputError({"turns": errors})


def _idempotency_content(
    *,
    transcript: str | dict[str, str],
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


def recording_ingest(
    *,
    external_id: str,
    source: str,
    rubric: Rubric,
    transcript: str | None = None,
    turns: list[Turn] | None = None,
    audio: File | None = None,
    agent_channel: str = "",
    customer_channel: str = "",
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

    With `audio` instead of a transcript, the file and its channel map
    (`agent_channel`, `customer_channel`: qa.audio.channel_map_check) are checked,
    the file put in the default storage, and its transcription enqueued
    (qa.transcribing); the judgment follows the transcript. A refused file stores
    nothing; so does a rolled-back one, once `audio_orphans_delete` has run.

    Idempotent on (source, external_id): the same content again returns the
    stored recording; different content raises RecordingConflictError.
    """
    if audio is not None:
        return _recording_ingest_audio(
            external_id=external_id, source=source, rubric=rubric, audio=audio, agent_channel=agent_channel,
            customer_channel=customer_channel, agent_id=agent_id, agent_name=agent_name, team=team, channel=channel, language=language,
            occurred_at=occurred_at, duration_seconds=duration_seconds, transcript=transcript, turns=turns,
            judge=judge,
        )  # fmt: skip
    recording = recording_prepare(
        external_id=external_id, source=source, rubric=rubric, transcript=transcript, turns=turns,
        agent_channel=agent_channel, customer_channel=customer_channel, agent_id=agent_id, agent_name=agent_name,
        team=team, channel=channel, language=language, occurred_at=occurred_at, duration_seconds=duration_seconds,
        transcript_source=transcript_source,
    )  # fmt: skip
    [ingested] = recordings_store(recordings=[recording], judge=judge)
    if ingested.status is IngestStatus.CREATED:
        return recording, True
    # The lookup read only what the comparison needs.
    stored = Recording.objects.select_related("rubric").get(pk=ingested.recording.pk)
    if ingested.status is IngestStatus.CONFLICT:
        raise RecordingConflictError(stored)
    return stored, False


def _check_common(
    *, external_id: str, source: str, transcript: str | None, turns: list[Turn] | None, audio: File | None,
    agent_channel: str, customer_channel: str, agent_id: str = "", team: str = "",
) -> None:  # fmt: skip
    """The checks every recording passes, whether it brings a transcript, turns or audio."""
    if not external_id.strip():
        raise InvalidInputError({"external_id": _("external_id may not be blank.")})
    # The same rule for every identifier a page, an export or a log line shows.
    for field, value in (("external_id", external_id), ("source", source), ("agent", agent_id), ("team", team)):
        if has_control_characters(value):
            raise InvalidInputError(
                {field: _("%(field)s may not contain control characters (line breaks, tabs, NUL...).") % {"field": field}}
            )
    if sum(given is not None for given in (transcript, turns, audio)) != 1:
        raise InvalidInputError(
            {"transcript": _("Send one of 'transcript', 'turns' or 'audio': not both and not none.")}
        )
    channel_name_check("agent_channel", agent_channel)
    channel_name_check("customer_channel", customer_channel)


def _occurred_or_received(occurred_at: datetime | None) -> tuple[datetime, bool]:
    """The time a new recording is filed under, and whether it is the time received: the dated views
    (dashboard, reports, scorecards, lists) filter on `occurred_at`, so a call sent without its own
    time takes the time it arrived rather than falling out of every one of them."""
    if occurred_at is None:
        return timezone.now(), True
    return occurred_at, False


def _check_rubric_and_time(*, rubric: Rubric, occurred_at: datetime | None) -> None:
    if rubric.status != Rubric.Status.PUBLISHED:
        raise InvalidInputError({"rubric": _("Rubric %(slug)s has no published version.") % {"slug": rubric.slug}})
    if occurred_at is not None and occurred_at > timezone.now():
        raise InvalidInputError({"occurred_at": _("occurred_at is in the future.")})


def recording_prepare(
    *,
    external_id: str,
    source: str,
    rubric: Rubric,
    transcript: str | None = None,
    turns: list[Turn] | None = None,
    agent_channel: str = "",
    customer_channel: str = "",
    agent_id: str = "",
    agent_name: str = "",
    team: str = "",
    channel: str = Recording.Channel.VOICE,
    language: str = "",
    occurred_at: datetime | None = None,
    duration_seconds: int | None = None,
    transcript_source: str = Recording.TranscriptSource.IMPORT,
) -> Recording:
    """A checked, unsaved recording with its content hash, for `recordings_store`; InvalidInputError
    naming the field otherwise. Writes nothing, so a batch checks every item before storing any."""
    _check_common(
        external_id=external_id, source=source, transcript=transcript, turns=turns, audio=None,
        agent_channel=agent_channel, customer_channel=customer_channel, agent_id=agent_id, team=team,
    )  # fmt: skip
    transcript_check_size(transcript=transcript, turns=turns)
    if turns is not None:
        turns_check(turns, duration_seconds=duration_seconds)
        transcript = turns_render(turns)
    transcript_check_verbatim(transcript)
    _check_rubric_and_time(rubric=rubric, occurred_at=occurred_at)
    content = _idempotency_content(
        transcript=transcript, rubric=rubric, agent_id=agent_id, agent_name=agent_name, team=team,
        channel=channel, language=language, occurred_at=occurred_at, duration_seconds=duration_seconds,
    )  # fmt: skip
    # The content hash above takes the time as sent, so a resend without it is still the same call.
    filed_at, received = _occurred_or_received(occurred_at)
    return Recording(
        external_id=external_id,
        source=source,
        rubric=rubric,
        workspace_id=rubric.workspace_id,  # bulk_create calls no save()
        transcript=transcript,
        turns=[vars(turn) for turn in turns] if turns is not None else None,
        agent_id=agent_id,
        agent_name=agent_name,
        team=team,
        channel=channel,
        language=language or rubric.language,
        occurred_at=filed_at,
        occurred_at_received=received,
        duration_seconds=duration_seconds,
        transcript_source=transcript_source,
        content_hash=_content_hash(content),
        audio="",
    )


class IngestStatus(StrEnum):
    CREATED = "created"
    EXISTING = "existing"  # sent before with the same content: the stored recording
    CONFLICT = "conflict"  # sent before with other content: the stored recording, unchanged
    NOT_STORED = "not_stored"  # its chunk met a database error; sending it again is safe


@dataclass(frozen=True)
class Ingested:
    status: IngestStatus
    recording: Recording | None = None


# A race lost to a concurrent post of the same external_id: the next attempt finds it stored.
STORE_ATTEMPTS = 3
# Recordings per transaction (and per message to the broker) in `recordings_ingest`.
CHUNK_SIZE = 100


def recordings_store(*, recordings: list[Recording], judge: bool = True) -> list[Ingested]:
    """Store prepared recordings in one transaction, each with its pending run unless judge=False;
    one outcome per recording, in order. Idempotent on (source, external_id) as `recording_ingest`,
    a later duplicate in the list included. The runs are published in one message after commit.

    A single recording is inserted without looking first (a new one is the common case, and the
    unique constraint answers for the others); a list looks its ids up in one query.
    """
    for attempt in range(1, STORE_ATTEMPTS + 1):
        try:
            return _recordings_store(recordings, judge=judge, look_up=len(recordings) > 1 or attempt > 1)
        except IntegrityError:
            if attempt == STORE_ATTEMPTS:
                raise
            for recording in recordings:  # rolled back: insert them afresh
                recording.pk, recording._state.adding, recording._state.db = None, True, None
    raise AssertionError("unreachable")


@transaction.atomic
def _recordings_store(recordings: list[Recording], *, judge: bool, look_up: bool) -> list[Ingested]:
    stored = {}
    if look_up:
        stored = {
            (recording.workspace_id, recording.source, recording.external_id): recording
            for recording in Recording.objects.filter(
                workspace__in={recording.workspace_id for recording in recordings},
                source__in={recording.source for recording in recordings},
                external_id__in={recording.external_id for recording in recordings},
            ).only("pk", "workspace_id", "source", "external_id", "content_hash", "status")
        }
    outcomes, new = [], []
    for recording in recordings:
        key = (recording.workspace_id, recording.source, recording.external_id)
        if key not in stored:
            stored[key] = recording
            new.append(recording)
            outcomes.append(Ingested(IngestStatus.CREATED, recording))
        elif stored[key].content_hash == recording.content_hash:
            outcomes.append(Ingested(IngestStatus.EXISTING, stored[key]))
        else:
            outcomes.append(Ingested(IngestStatus.CONFLICT, stored[key]))
    if not new:
        return outcomes
    if judge:
        for recording in new:  # its run is created below, in this transaction
            recording.status = Recording.Status.QUEUED
    teams_ensure(recordings=new)
    Recording.objects.bulk_create(new)
    if judge:
        runs = JudgeRun.objects.bulk_create(
            JudgeRun(recording=recording, rubric=recording.rubric, judge_id=Judge.objects.default_id())
            for recording in new
        )
        transaction.on_commit(lambda: _runs_publish(runs))
    return outcomes


def teams_ensure(*, recordings: list[Recording]) -> None:
    """Each team these recordings name becomes a team of their workspace (a supervisor's membership
    names it), in one statement: whoever may post a workspace's calls may name its teams."""
    pairs = {(recording.rubric.workspace_id, recording.team) for recording in recordings if recording.team}
    if pairs:
        Team.objects.bulk_create([Team(workspace_id=ws, name=name) for ws, name in pairs], ignore_conflicts=True)


def _runs_publish(runs: list[JudgeRun]) -> None:
    """One message for the chunk's runs; if the broker is down they stay pending for the sweep and
    their recordings go back to received, as with a single post."""
    if len(runs) == 1:
        judge_run_publish(run=runs[0])
        return
    try:
        task_publish("qa.judge_runs_fan_out", [run.pk for run in runs])
    except OperationalError:
        logger.warning("Broker unreachable: %s runs stay pending for the sweep.", len(runs), exc_info=True)
        Recording.objects.filter(pk__in=[run.recording_id for run in runs], status=Recording.Status.QUEUED).update(
            status=Recording.Status.RECEIVED, updated_at=timezone.now()
        )
        for run in runs:
            run.recording.status = Recording.Status.RECEIVED


def recordings_ingest(*, recordings: list[Recording], judge: bool = True) -> list[Ingested]:
    """`recordings_store` chunk by chunk (CHUNK_SIZE per transaction and per message): a database
    error costs its own chunk, whose recordings are NOT_STORED (nothing of them written), not the others."""
    outcomes: list[Ingested] = []
    for start in range(0, len(recordings), CHUNK_SIZE):
        chunk = recordings[start : start + CHUNK_SIZE]
        try:
            outcomes += recordings_store(recordings=chunk, judge=judge)
        except DatabaseError:
            logger.exception("A chunk of %s recordings was not stored.", len(chunk))
            outcomes += [Ingested(IngestStatus.NOT_STORED)] * len(chunk)
    return outcomes


@transaction.atomic
def _recording_ingest_audio(
    *, external_id: str, source: str, rubric: Rubric, audio: File, agent_channel: str, customer_channel: str,
    agent_id: str,
    agent_name: str, team: str, channel: str, language: str, occurred_at: datetime | None,
    duration_seconds: int | None, transcript: str | None, turns: list[Turn] | None, judge: bool,
) -> tuple[Recording, bool]:  # fmt: skip
    """Store the file and enqueue its transcription (qa.transcribing); the judgment follows the transcript."""
    _check_common(
        external_id=external_id, source=source, transcript=transcript, turns=turns, audio=audio,
        agent_channel=agent_channel, customer_channel=customer_channel, agent_id=agent_id, team=team,
    )  # fmt: skip
    audio_info = audio_inspect(audio, size=audio.size)
    agent, customer = channel_map_check(
        channels=audio_info.channels, agent_channel=agent_channel, customer_channel=customer_channel
    )
    _check_rubric_and_time(rubric=rubric, occurred_at=occurred_at)
    content = _idempotency_content(
        # Audio is compared by its bytes and the channels said to be the agent's and the customer's.
        transcript=_audio_content(audio, agent_channel, customer_channel),
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
    existing = Recording.objects.filter(workspace=rubric.workspace_id, source=source, external_id=external_id).first()
    if existing is not None:
        return _same_or_conflict(existing, content_hash), False
    filed_at, received = _occurred_or_received(occurred_at)
    try:
        # A savepoint, so that losing a race to a concurrent identical post
        # leaves this transaction usable for the lookup below.
        with transaction.atomic():
            recording = Recording(
                external_id=external_id,
                source=source,
                rubric=rubric,
                transcript="",
                agent_id=agent_id,
                agent_name=agent_name,
                team=team,
                channel=channel,
                language=language or rubric.language,
                occurred_at=filed_at,
                occurred_at_received=received,
                duration_seconds=(
                    duration_seconds if duration_seconds is not None else _rounded(audio_info.duration_seconds)
                ),
                transcript_source=Recording.TranscriptSource.ASR,
                content_hash=content_hash,
                audio_channels=audio_info.channels,
                agent_channel=agent,
                customer_channel=customer,
            )
            teams_ensure(recordings=[recording])
            _save_with_audio(recording, audio)
    except IntegrityError:
        existing = Recording.objects.get(workspace=rubric.workspace_id, source=source, external_id=external_id)
        return _same_or_conflict(existing, content_hash), False
    try:
        transcription_create(recording=recording, judge=judge)
    except BaseException:
        recording.audio.storage.delete(recording.audio.name)
        raise
    return recording, True


TRANSCRIPTION_ACTIVE = (Transcription.Status.PENDING, Transcription.Status.RUNNING)


@transaction.atomic
def transcription_create(*, recording: Recording, judge: bool = True) -> tuple[Transcription, bool]:
    """The stage before judging (qa.transcribing runs it): a pending transcription of `recording` (or its active one), enqueued once the
    transaction commits; and whether it is new. `judge=False` stops after the transcript."""
    Recording.objects.select_for_update().filter(pk=recording.pk).first()
    active = Transcription.objects.filter(recording=recording, status__in=TRANSCRIPTION_ACTIVE).first()
    if active is not None:
        return active, False
    if not recording.audio:
        raise ValueError(f"Recording {recording.pk} has no audio to transcribe.")
    transcription = Transcription.objects.create(recording=recording, judge_after=judge)
    Recording.objects.filter(pk=recording.pk).update(
        status=Recording.Status.TRANSCRIBING, failure_reason="", updated_at=timezone.now()
    )
    recording.status = Recording.Status.TRANSCRIBING
    transaction.on_commit(lambda: transcription_publish(transcription=transcription))
    return transcription, True


def transcription_publish(*, transcription: Transcription, countdown: float = 0.0) -> bool:
    """Hand the transcription to a worker; False if the broker is down (the sweep publishes it later)."""
    try:
        task_publish("qa.transcribe", transcription.pk, countdown=countdown)
    except OperationalError:
        logger.warning(
            "Broker unreachable: transcription %s stays pending for the sweep.", transcription.pk, exc_info=True
        )
        return False
    return True


def _rounded(seconds: float | None) -> int | None:
    return round(seconds) if seconds is not None else None  # a header without the length: unknown


def _audio_content(audio: File, agent_channel: str, customer_channel: str) -> dict[str, str]:
    content = {"audio_sha256": _file_hash(audio), "agent_channel": agent_channel}
    if customer_channel:  # only when sent: a stereo post's hash is what it was before channel maps
        content["customer_channel"] = customer_channel
    return content


def _file_hash(file: File) -> str:
    digest = hashlib.sha256()
    file.seek(0)
    for chunk in file.chunks():
        digest.update(chunk)
    file.seek(0)
    return digest.hexdigest()


def _save_with_audio(recording: Recording, audio: File | None) -> None:
    """Insert the row with its audio in the storage; a row that cannot be written leaves no file behind."""
    if audio is None:
        recording.save()
        return
    recording.audio.save(audio.name or "audio", audio, save=False)
    stored = recording.audio.name
    try:
        recording.save()
    except BaseException:
        recording.audio.storage.delete(stored)
        raise


def _same_or_conflict(existing: Recording, content_hash: str) -> Recording:
    if existing.content_hash != content_hash:
        raise RecordingConflictError(existing)
    return existing


def audio_orphans_delete(*, older_than: timedelta = AUDIO_ORPHAN_GRACE) -> list[str]:
    """Delete the stored audio files no recording refers to; return their names.

    A file is written before its row commits, and Django has no hook for a
    rollback: an ingest inside a caller's transaction that then rolls back (or a
    process killed before the commit) leaves its file. This sweep, run hourly
    (`qa.audio_orphans_sweep`), removes it once it is older than `older_than`.
    Files are kept in monthly folders, so only this month's and the previous
    one's are listed: an orphan is found within hours, not months, later.
    """
    storage = Recording._meta.get_field("audio").storage
    now = timezone.now()
    cutoff = now - older_than
    names = []
    for folder in sorted({audio_folder(now), audio_folder(now.replace(day=1) - timedelta(days=1))}):
        try:
            names += [f"{folder}/{name}" for name in storage.listdir(folder)[1]]
        except FileNotFoundError:
            continue
    kept = set(Recording.objects.filter(audio__in=names).values_list("audio", flat=True))
    orphans = [name for name in names if name not in kept and storage.get_modified_time(name) <= cutoff]
    for name in orphans:
        storage.delete(name)
    return orphans


# bulk_update writes one CASE with a branch per row, which every row of the batch runs through:
# batches of thousands cost quadratic time (the benchmark's 100,000 recordings took minutes).
UPDATE_BATCH = 100


def recordings_current_values_store(*, recordings: QuerySet[Recording], batch_size: int = 2000) -> int:
    """Set `current_values` from each judged recording's current run, for recordings the judging did
    not set them on: those judged before the field existed (its migration) and those written by SQL
    (the benchmarks). Returns how many were set."""
    stored = 0
    runs = dict(recordings.filter(current_run__isnull=False).values_list("current_run_id", "pk"))
    run_ids = sorted(runs)
    for start in range(0, len(run_ids), batch_size):
        batch = run_ids[start : start + batch_size]
        values: dict[int, dict[str, int | None]] = {run_id: {} for run_id in batch}
        for run_id, key, value in Score.objects.filter(run_id__in=batch).values_list(
            "run_id", "criterion__key", "value"
        ):
            values[run_id][key] = value  # as values_by_key keeps them
        Recording.objects.bulk_update(
            [Recording(pk=runs[run_id], current_values=values[run_id]) for run_id in batch],
            ["current_values"],
            batch_size=UPDATE_BATCH,
        )
        stored += len(batch)
    return stored


def recordings_quality_store(*, recordings: QuerySet[Recording], batch_size: int = 2000, coverage: bool = True) -> int:
    """Set `quality_score`, `auto_failed` and `quality_missing` from each judged recording's current run, as the
    routing sets them (`qa.quality`), for recordings judged before the fields existed or the rule changed (their
    migrations; `coverage=False` for one that runs before `quality_missing` exists). Returns how many."""
    rows = list(recordings.filter(current_run__isnull=False).values_list("pk", "current_run_id", "current_run__rubric_id"))
    policies: dict[int, QualityPolicy] = {}
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        values: dict[int, dict[str, QualityValue]] = {run_id: {} for _pk, run_id, _rubric in batch}
        scores = Score.objects.filter(run_id__in=list(values)).values_list("run_id", "criterion__key", "value", "evidence_verified")
        for run_id, key, value, verified in scores:
            found = judge_value(value=value, evidence_verified=verified)
            if found is not None:
                values[run_id][key] = found
        updates = []
        for pk, run_id, rubric_id in batch:
            if rubric_id not in policies:
                policies[rubric_id] = rubric_quality_policy(Rubric.objects.get(pk=rubric_id))
            quality = judge_values_quality(policy=policies[rubric_id], values=values[run_id])
            updates.append(Recording(pk=pk, quality_score=quality.score, auto_failed=quality.auto_failed,
                                     quality_missing=len(quality.missing)))  # fmt: skip
        fields = ["quality_score", "auto_failed", *(["quality_missing"] if coverage else [])]
        Recording.objects.bulk_update(updates, fields, batch_size=UPDATE_BATCH)
    return len(rows)
