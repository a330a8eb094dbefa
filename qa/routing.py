"""Which judged recordings a supervisor must see, and why.

A recording goes to review when any stored confidence is below its criterion's
certified threshold (`below_certified`: the threshold the random audit certified for
this rubric version, judge, model and prompt version, stored by the routing app as
qa.models.CertifiedThreshold), or, for a criterion with none certified, below the
rubric's fixed threshold (every unverified quote has confidence 0, so it always does), when
its speakers are unknown (mono audio without diarization), when its transcript
holds instructions addressed to a model (qa.injection), when
a judge taking several samples found a criterion unstable, when
its judgment is one of the first of a new rubric version, prompt version or
model (the warm-up), and when the random audit draws it. The audit draw is a
hash of the recording's identity and the rubric version: anyone can recompute
it, re-judging does not redraw it, and over many recordings its rate converges
to the configured one. It is recorded whatever else the call was routed for,
so the audit stays a uniform sample of all judged calls.
"""

from __future__ import annotations

import hashlib
import math
import operator
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from enum import StrEnum
from functools import reduce

from django.db import connection
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.db.models.lookups import Contains
from django.utils import timezone

from qa.injection import injection_suspected
from qa.models import CertifiedThreshold, JudgeRun, Recording, Score, judge_name_of, values_by_key
from qa.quality import judge_quality
from rubrics.models import Rubric

Reason = Recording.ReviewReason


class ReviewGroup(StrEnum):
    """What a review may be used to estimate (see the reports)."""

    RANDOM_AUDIT = "random_audit"  # a uniform sample of all judged calls
    WARM_UP = "warm_up"  # a census of a new version's first calls
    FLAGGED = "flagged"  # chosen for a doubt: estimates nothing about all calls


def review_group(reason: str) -> ReviewGroup:
    """The group a review reason puts its recording in: every reason that is
    not the audit or the warm-up flags a doubt, so a new reason is a flag."""
    if reason == Reason.RANDOM_AUDIT:
        return ReviewGroup.RANDOM_AUDIT
    if reason == Reason.WARM_UP:
        return ReviewGroup.WARM_UP
    return ReviewGroup.FLAGGED


def review_groups(reasons: Iterable[str]) -> set[ReviewGroup]:
    """The groups a recording routed for `reasons` belongs to."""
    return {review_group(reason) for reason in reasons}


def group_reasons(group: ReviewGroup) -> tuple[str, ...]:
    """The reasons that put a recording in `group`, for queries."""
    return tuple(reason for reason in Reason.values if review_group(reason) == group)


def in_review_group(group: ReviewGroup, reasons_path: str = "review_reasons") -> Q:
    """`review_groups` as a query condition: the recording whose review reasons `reasons_path` reaches
    (a lookup path from the model queried) is in `group`. Every query by group uses this one."""
    reasons = group_reasons(group)
    if connection.features.supports_json_field_contains:
        # PostgreSQL: jsonb containment, with no per-row conversion to text.
        return reduce(operator.or_, (Q(**{f"{reasons_path}__contains": [reason]}) for reason in reasons))
    # SQLite has no JSON containment. The stored list holds each reason as a
    # quoted token, so a LIKE on the quoted reason matches exactly that reason.
    text = Cast(reasons_path, TextField())
    return reduce(operator.or_, (Q(Contains(text, f'"{reason}"')) for reason in reasons))


def audit_draw(*, source: str, external_id: str, rubric_slug: str, rubric_version: int) -> float:
    """A reproducible uniform number in [0, 1) for this recording and rubric version."""
    identity = f"{source}\x1f{external_id}\x1f{rubric_slug}\x1f{rubric_version}"
    return int.from_bytes(hashlib.sha256(identity.encode()).digest()[:8], "big") / 2**64


def audit_selected(*, recording: Recording, rubric: Rubric) -> bool:
    draw = audit_draw(
        source=recording.source,
        external_id=recording.external_id,
        rubric_slug=rubric.slug,
        rubric_version=rubric.version,
    )
    return draw < rubric.audit_rate


# (rubric id, prompt version, model) whose warm-up this process saw finished.
# A finished warm-up stays finished: succeeded runs are never rewritten and a
# published version's size never changes, so every later run skips the lock
# and the count.
_warm_up_over: set[tuple[int, str, str]] = set()


def run_in_warm_up(*, run: JudgeRun) -> bool:
    """Whether a run finishing now is among the first `warm_up_judgments` of its
    rubric version, prompt version and model, so a change of any of the three
    starts a new warm-up. Call it inside the transaction that marks the run
    succeeded: the rubric's row lock makes concurrent workers count in turn,
    so exactly the first N to finish are in it."""
    key = (run.rubric_id, run.prompt_version, run.model)
    if key in _warm_up_over:
        return False
    size = Rubric.objects.select_for_update().values_list("warm_up_judgments", flat=True).get(pk=run.rubric_id)
    earlier = JudgeRun.objects.filter(
        rubric_id=run.rubric_id,
        prompt_version=run.prompt_version,
        model=run.model,
        status=JudgeRun.Status.SUCCEEDED,
    ).exclude(pk=run.pk)
    in_warm_up = earlier[:size].count() < size
    if not in_warm_up:
        _warm_up_over.add(key)
    return in_warm_up


# Per (rubric id, judge name, model, prompt version, day): the thresholds in force, and until when this process may
# keep them. A day's own rows never change once written (frozen), so they are kept for good; while the day has
# none yet (the beat has not run), what came before is kept for a minute, so a judgment costs no query of its own
# and the day's certificate is in use a minute after the beat writes it.
_certified: dict[tuple[int, str, str, str, date], tuple[dict[int, float], float]] = {}
CERTIFIED_RECHECK_SECONDS = 60.0


def certified_thresholds_forget() -> None:
    _certified.clear()


def certified_thresholds(*, run: JudgeRun, day: date | None = None) -> dict[int, float]:
    """Per criterion id, the threshold the audit certified for `run`'s rubric version, judge, model and prompt
    version, as in force on `day` (today by default): the latest day's rows on or before it, so a call routed
    again later is routed as it was. A criterion absent is uncertified (warm-up, too few audits): the rubric's
    fixed threshold applies to it."""
    day = day or timezone.localdate()
    key = (run.rubric_id, judge_name_of(run), run.model, run.prompt_version, day)
    now = time.monotonic()
    kept = _certified.get(key)
    if kept is not None and now < kept[1]:
        return kept[0]
    rows = CertifiedThreshold.objects.filter(
        rubric_id=run.rubric_id, judge_name=key[1], model=run.model, prompt_version=run.prompt_version, day__lte=day
    )
    latest = rows.order_by("-day").values_list("day", flat=True).first()
    thresholds = (
        dict(rows.filter(day=latest, threshold__isnull=False).values_list("criterion_id", "threshold"))
        if latest is not None
        else {}
    )
    _certified[key] = (thresholds, math.inf if latest == day else now + CERTIFIED_RECHECK_SECONDS)
    return thresholds


def review_reasons(
    *,
    recording: Recording,
    rubric: Rubric,
    scores: Sequence[Score],
    warm_up: bool = False,
    certified: Mapping[int, float] | None = None,
) -> list[str]:
    """The reasons to review, in a stable order; empty when the recording need not be seen.

    `certified`: per criterion id, its certified threshold (`certified_thresholds`); a criterion without one keeps
    the rubric's fixed threshold."""
    reasons = []
    if any(not score.evidence_verified for score in scores):
        reasons.append(Reason.UNVERIFIED_EVIDENCE.value)
    verified = [score for score in scores if score.evidence_verified]
    uncertified = [score for score in verified if not certified or score.criterion_id not in certified]
    if any(score.confidence < rubric.review_confidence_threshold for score in uncertified):
        reasons.append(Reason.LOW_CONFIDENCE.value)
    # Below what the audit certified: keeping it would break the agreement the rubric promises.
    if certified and any(
        score.criterion_id in certified and score.confidence < certified[score.criterion_id] for score in verified
    ):
        reasons.append(Reason.BELOW_CERTIFIED.value)
    # A judge's own samples disagreeing is doubt the confidence may not show.
    if any(score.unstable for score in scores):
        reasons.append(Reason.UNSTABLE.value)
    if rubric.route_auto_fail and judge_quality(rubric=rubric, scores=scores).auto_failed:
        # A critical criterion failed the call by a value that exists: a breach a supervisor confirms.
        reasons.append(Reason.AUTO_FAIL.value)
    if warm_up:
        reasons.append(Reason.WARM_UP.value)
    if not recording.speakers_known:
        # Transcribed from mono audio without diarization: a criterion about
        # what the agent said cannot be trusted, so a supervisor must look.
        reasons.append(Reason.UNKNOWN_SPEAKER.value)
    if injection_suspected(recording.transcript):
        # Words that tell the judge what to score: a supervisor checks the scores did not follow them.
        reasons.append(Reason.POSSIBLE_INJECTION.value)
    if audit_selected(recording=recording, rubric=rubric):
        reasons.append(Reason.RANDOM_AUDIT.value)
    return reasons


def routing_fields(
    *,
    recording: Recording,
    rubric: Rubric,
    scores: Sequence[Score],
    warm_up: bool = False,
    certified: Mapping[int, float] | None = None,
) -> dict[str, object]:
    """The recording's fields that follow the scores of its current run, ready for an UPDATE:
    how it is routed, its quality score, and the values the scorecards sum (`Recording.current_values`, marked for
    their weekly rollup)."""
    reasons = review_reasons(recording=recording, rubric=rubric, scores=scores, warm_up=warm_up, certified=certified)
    status = Recording.Status.IN_REVIEW if reasons else Recording.Status.JUDGED
    quality = judge_quality(rubric=rubric, scores=scores)
    return {
        "quality_score": quality.score,
        "quality_missing": len(quality.missing),
        "auto_failed": quality.auto_failed,
        "needs_review": bool(reasons),
        "review_reasons": reasons,
        "status": status,
        "lowest_confidence": min((score.confidence for score in scores), default=None),
        "current_values": values_by_key(scores),
        "rollup_stale": True,
    }


def recording_route(*, recording: Recording, run: JudgeRun, scores: Sequence[Score]) -> bool:
    """Route a judged recording again from its current run's scores; return whether it was.

    A recording a supervisor already reviewed, or one being judged again, is
    left as it is.
    """
    # By the thresholds in force the day the run finished, as it was first routed.
    day = timezone.localdate(run.finished_at) if run.finished_at else None
    fields = routing_fields(
        recording=recording, rubric=run.rubric, scores=scores, warm_up=run.warm_up,
        certified=certified_thresholds(run=run, day=day),
    )  # fmt: skip
    routable = Recording.objects.filter(
        pk=recording.pk, status__in=[Recording.Status.JUDGED, Recording.Status.IN_REVIEW]
    )
    return bool(routable.update(**fields, updated_at=timezone.now()))
