"""Reads for recordings, shaped so that the number of queries per request does
not grow with the rows returned."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Prefetch, QuerySet

from access.scope import Scope
from qa.evidence import parse_turns
from qa.filters import agent_q, occurred_q
from qa.judging import ACTIVE
from qa.models import Judge, JudgeRun, Recording, Score


@dataclass(frozen=True)
class RecordingFilters:
    status: str | None = None
    rubric: str | None = None  # slug, any version
    agent: str | None = None  # the agent id, exactly (qa.filters.agent_q)
    team: str | None = None
    needs_review: bool | None = None
    source: str | None = None
    external_id: str | None = None
    # [occurred_after, occurred_before): the start included, the end not (qa.filters.occurred_q).
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None


# Each plain filter's field lookup; a filter left empty is not applied. The agent and the bounds follow qa.filters.
RECORDING_FILTER_LOOKUPS = {
    "status": "status",
    "rubric": "rubric__slug",
    "team": "team",
    "needs_review": "needs_review",
    "source": "source",
    "external_id": "external_id",
}


def recording_list(*, filters: RecordingFilters, scope: Scope) -> QuerySet[Recording]:
    """The recordings `scope` sees (a key's: its source's) that match `filters`."""
    conditions = {
        lookup: getattr(filters, name)
        for name, lookup in RECORDING_FILTER_LOOKUPS.items()
        if getattr(filters, name) not in (None, "")
    }
    return (
        Recording.objects.visible_to(scope)
        .select_related("rubric")
        .defer("transcript", "turns")
        .filter(agent_q(filters.agent or ""), occurred_q(filters.occurred_after, filters.occurred_before), **conditions)
    )


def recording_details() -> QuerySet[Recording]:
    """Recordings with their latest run (as `latest_runs`, at most one) and the scores
    of their current run, in four queries; the reviews layer adds the reviews."""
    latest_runs = Prefetch(
        "runs", queryset=JudgeRun.objects.defer("raw_output").select_related("judge").order_by("-created_at", "-id")[:1],
        to_attr="latest_runs",
    )
    scores = Prefetch("current_run__scores", queryset=Score.objects.select_related("criterion"))
    return (
        Recording.objects.select_related("rubric", "current_run")
        .defer("current_run__raw_output")
        .prefetch_related(latest_runs, scores)
    )


def recording_active_run(*, recording: Recording) -> JudgeRun | None:
    return JudgeRun.objects.filter(recording=recording, status__in=ACTIVE).first()


@dataclass(frozen=True)
class TurnTimes:
    """One turn of a recording's transcript: who, what, where in the transcript (characters, the
    label excluded) and when in the audio (ms; None where the recognizer or the sender gave no time)."""

    speaker: str | None
    text: str
    start: int
    end: int
    start_ms: int | None
    end_ms: int | None


def recording_turns(*, recording: Recording) -> list[TurnTimes]:
    """The transcript's turns, with the times of the structured turns the recording keeps (the
    recognizer's, or those it was sent with) where they line up one to one with the transcript's
    (same count, same speakers, as the review page requires): a wrong time is worse than none."""
    turns = parse_turns(recording.transcript)
    given = recording.turns or []
    lined_up = len(given) == len(turns) and all(
        " ".join(str(structured.get("speaker", "")).split()) == parsed.speaker for structured, parsed in zip(given, turns)
    )
    return [
        TurnTimes(
            speaker=turn.speaker,
            text=turn.text,
            start=turn.start,
            end=turn.end,
            start_ms=given[index].get("start_ms") if lined_up else None,
            end_ms=given[index].get("end_ms") if lined_up else None,
        )
        for index, turn in enumerate(turns)
    ]


@dataclass(frozen=True)
class FragmentTimes:
    """One fragment of a quote as found in the transcript (characters) and, for a verified quote,
    the audio it was said in (ms; None without timing)."""

    start: int
    end: int
    start_ms: int | None
    end_ms: int | None


def score_fragments(*, recording: Recording, scores: list[Score]) -> dict[int, list[FragmentTimes]]:
    """Per score id, its quote's fragments; times only for a verified quote (an unverified one's
    spans show what was found, which is not what the judge's score rests on: nothing to play).
    The recording's turns are read once for all the scores."""
    times = recording.fragment_times([score.verification_spans if score.evidence_verified else [] for score in scores])
    fragments = {}
    for score, quote_times in zip(scores, times):
        spans = score.verification_spans
        timed = quote_times if score.evidence_verified else [None] * len(spans)
        fragments[score.pk] = [
            FragmentTimes(start, end, *(time or (None, None))) for (start, end), time in zip(spans, timed, strict=True)
        ]
    return fragments


def judge_default_model() -> str:
    """The model of the judge new runs take, as pages name it ("" when none is marked default: the
    environment's judge). A recorded judge's model names the recording ("…, recorded on …")."""
    judge = Judge.objects.default()
    return judge.model if judge else ""

