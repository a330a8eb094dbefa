"""Redacting a recording, in a worker before it is judged (never in a web request: the spaCy model
costs 110-190 ms of CPU a call and a second to load, bench/redaction/README.md).

``recording_redact`` runs once per recording: the entities of the mask_at_rest types are replaced in
the stored transcript and its turns (the values are gone), and the positions of the mask_for_llm ones
are kept so that every judgment sends the same redacted text. ``judge_view`` builds that text."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from qa.models import Recording

from .engine import PLACEHOLDERS, Found, Redaction, find, redact
from .models import Action, RecordingRedaction
from .policy import name_model_missing, name_models, policy_get, types_with
from .types import LANGUAGES

logger = logging.getLogger(__name__)


class NameModelMissingError(RuntimeError):
    """The policy masks names or places and the model that finds them is not installed: redacting would
    let every name through, so nothing is redacted, stored or sent."""


def _names_findable(policy: dict[str, str], language: str) -> str:
    """The name model to find with; NameModelMissingError when the policy needs one that is missing."""
    if reason := name_model_missing(policy, language):
        raise NameModelMissingError(reason)
    return name_models()[language]


def redaction_language(*languages: str) -> str:
    """The first of `languages` (the call's, then the rubric's) the redactor has rules for; English otherwise."""
    for language in languages:
        code = (language or "").lower()[:2]
        if code in LANGUAGES:
            return code
    return "en"


def recording_redact(*, recording_id: int) -> RecordingRedaction:
    """Redact a recording's stored transcript once; later calls return the first pass."""
    existing = RecordingRedaction.objects.filter(recording_id=recording_id).first()
    if existing is not None:
        return existing
    recording = Recording.objects.select_related("rubric").only(
        "transcript", "turns", "language", "agent_name", "audio", "rubric__language"
    ).get(pk=recording_id)
    language = redaction_language(recording.language, recording.rubric.language)
    placeholders = redaction_language(recording.rubric.language, language)
    keep = [] if settings.QA_REDACTION_MASK_AGENT_NAME else [recording.agent_name]
    policy = policy_get()
    model = _names_findable(policy, language)
    # Found outside the transaction: 150 ms of CPU need not hold the row's lock.
    found = find(recording.transcript, language, keep_names=keep, model=model)
    at_rest = redact(
        recording.transcript, found, placeholder_language=placeholders, types=types_with(policy, Action.MASK_AT_REST)
    )
    for_llm = [item for item in found if item.type in types_with(policy, Action.MASK_FOR_LLM)]
    llm_spans = [[item.type, at_rest.to_output(item.start), at_rest.to_output(item.end)] for item in for_llm]
    with transaction.atomic():
        locked = Recording.objects.select_for_update().only("transcript", "turns").get(pk=recording_id)
        existing = RecordingRedaction.objects.filter(recording_id=recording_id).first()
        if existing is not None:
            return existing
        if locked.transcript != recording.transcript:
            raise RuntimeError(f"Recording {recording_id}'s transcript changed while it was being redacted.")
        turns = locked.turns
        if at_rest.masked:
            turns = turns_masked(locked.turns, at_rest) if locked.turns else locked.turns
            Recording.objects.filter(pk=recording_id).update(transcript=at_rest.text, turns=turns)
        silenced = _silenced_spans(turns) if recording.audio else []
        redaction = RecordingRedaction.objects.create(
            recording_id=recording_id,
            language=language,
            masked_at_rest=at_rest.counts(),
            masked_for_llm=_counts(for_llm),
            llm_spans=llm_spans,
            silenced_ms=silenced,
        )
        if silenced:
            # Inside the transaction: if the rewrite fails, nothing of the redaction is stored, the run
            # fails unjudged, and the original audio is still there for the next attempt.
            recording_audio_silence(recording_id=recording_id, spans_ms=silenced)
        return redaction


def _silenced_spans(turns: list[dict] | None) -> list[list[int]]:
    """The time spans of the words turns_masked replaced (it marks them `masked`)."""
    return [
        [word["start_ms"], word["end_ms"]]
        for turn in turns or []
        for word in turn.get("words") or []
        if word.get("masked") and word.get("start_ms") is not None and word.get("end_ms") is not None
    ]


def recording_audio_silence(*, recording_id: int, spans_ms: list[list[int]]) -> None:
    """Rewrite the recording's stored audio with `spans_ms` silenced, in place: the original is not kept."""
    import os
    import tempfile

    from django.core.files.base import ContentFile

    from .audio import audio_silence

    audio = Recording.objects.only("audio").get(pk=recording_id).audio
    if not audio:
        return
    with audio.storage.open(audio.name, "rb") as source:
        silenced = audio_silence(source.read(), spans_ms)
    try:
        path = audio.storage.path(audio.name)
    except NotImplementedError:  # a remote storage: replace the object under its name
        audio.storage.delete(audio.name)
        saved = audio.storage.save(audio.name, ContentFile(silenced))
        if saved != audio.name:
            Recording.objects.filter(pk=recording_id).update(audio=saved)
        return
    # On disk, a new file moved over the old one: never a moment without the recording.
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".part")
    with os.fdopen(handle, "wb") as target:
        target.write(silenced)
    os.replace(temporary, path)


def _counts(found: Sequence[Found]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in found:
        counts[item.type] = counts.get(item.type, 0) + 1
    return counts


def turns_masked(turns: list[dict], redaction: Redaction) -> list[dict]:
    """The structured turns with the same replacements as the transcript they render to
    (qa.services.turns_render): the words an entity covers become one word, the placeholder (with any
    characters of the first and last word outside the entity), timed from the first word's start to
    the last one's end, so audio spans and the silencing still find it."""
    offset, result = 0, []
    masked = list(redaction.masked)
    for turn in turns:
        turn = dict(turn)
        offset += len(f"{turn['speaker']}: ")
        words = turn.get("words") or []
        if words:
            pieces, position = [], offset
            for index, word in enumerate(words):
                if index:
                    position += 1
                pieces.append((position, position + len(word["word"]), word))
                position += len(word["word"])
            new_words, index = [], 0
            while index < len(pieces):
                start, end, word = pieces[index]
                hit = next((item for item in masked if item.start < end and start < item.end), None)
                if hit is None:
                    new_words.append(word)
                    index += 1
                    continue
                last = index
                while last + 1 < len(pieces) and pieces[last + 1][0] < hit.end:
                    last += 1
                first_start, last_end = start, pieces[last][1]
                text = redaction.source[first_start:hit.start] + hit.placeholder + redaction.source[hit.end:last_end]
                new_words.append({**word, "word": text, "end_ms": pieces[last][2]["end_ms"], "masked": hit.type})
                index = last + 1
            turn["words"] = new_words
            turn["text"] = " ".join(word["word"] for word in new_words)
            offset = position
        else:
            start, end = offset, offset + len(turn["text"])
            text = turn["text"]
            for item in reversed([item for item in masked if start <= item.start and item.end <= end]):
                text = text[: item.start - start] + item.placeholder + text[item.end - start :]
            turn["text"] = text
            offset = end
        offset += 1  # the line break
        result.append(turn)
    return result


def judge_view(
    *, transcript: str, local: bool, language: str, llm_spans: Sequence[Sequence] | None = None
) -> Redaction:
    """What a judge is sent of a stored transcript: for a model that is not the local one, the
    mask_for_llm entities replaced (at their stored positions when the recording was redacted, else
    found now with any mask_at_rest ones, as for an experiment's transcript); for the local one, the
    stored text as it is."""
    language = redaction_language(language)
    if local:
        return Redaction(transcript, transcript, ())
    if llm_spans is None:
        # A transcript no redaction has seen (an experiment's, say): a mask_at_rest value may still
        # be in it, and must not leave either.
        policy = policy_get()
        model = _names_findable(policy, language)
        types = types_with(policy, Action.MASK_FOR_LLM) | types_with(policy, Action.MASK_AT_REST)
        found = [item for item in find(transcript, language, model=model) if item.type in types]
    else:
        # The types the policy named when the recording was redacted: a judgment reads no policy.
        found = [Found(kind, start, end) for kind, start, end in llm_spans]
    return redact(transcript, found, placeholder_language=language if language in PLACEHOLDERS else "en")


def redaction_before_judging(*, run_id: int) -> bool:
    """Redact a pending run's recording before it is judged (qa.execution.judge_run_execute). A
    recording that cannot be redacted is never judged: its run and the recording fail, saying why.
    True when the run may be judged."""
    from django.utils import timezone

    from qa.models import JudgeRun

    recording_id = (
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.PENDING).values_list("recording_id", flat=True).first()
    )
    if recording_id is None:
        return True  # nothing pending: the executor will skip it
    try:
        recording_redact(recording_id=recording_id)
    except Exception as error:  # any failure: judging unredacted text is the one thing not to do
        logger.exception("Redaction of recording %s failed; run %s is not judged.", recording_id, run_id)
        reason = f"Redaction failed, so the call was not sent to the judge: {error}"
        now = timezone.now()
        JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.PENDING).update(
            status=JudgeRun.Status.FAILED, error=reason, finished_at=now
        )
        Recording.objects.filter(pk=recording_id).update(
            status=Recording.Status.FAILED, failure_reason=reason, updated_at=now
        )
        return False
    return True


def recording_transcript_replaced(*, recording_id: int) -> None:
    """A new transcript was stored (a transcription, qa.transcribing): the old redaction's positions
    no longer apply, so it is dropped and the new text redacted now, in this worker, before anyone
    reads it. If that fails, the judge's worker tries again and, failing, fails the run unjudged."""
    RecordingRedaction.objects.filter(recording_id=recording_id).delete()
    try:
        with transaction.atomic():
            recording_redact(recording_id=recording_id)
    except Exception:
        logger.exception("Redaction of recording %s failed after its transcription; retried before judging.", recording_id)
