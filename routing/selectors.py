"""Reads of the routing guarantee: the random audit's pairs a certificate is computed from, and the table of
certificates every place shows (the rubric's admin page, the API, `routing_certify`, the dashboard)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from django.db.models import Max, Q, Value
from django.db.models.functions import Coalesce

from qa.models import JUDGE_VALUE_EXISTS, CertifiedThreshold, JudgeRun, Recording, Score
from qa.routing import ReviewGroup, in_review_group
from reviews.reference import human_references
from routing.certification import pairs_to_certify, values_agree
from rubrics.models import Rubric


@dataclass(frozen=True)
class Judgments:
    """What a certificate is about: one rubric version judged by one judge, model and prompt version."""

    rubric_id: int
    judge_name: str  # "" for the environment's judge
    model: str
    prompt_version: str


def judgments_to_certify(*, rubric_ids: list[int] | None = None) -> list[Judgments]:
    """Every (rubric version, judge, model, prompt version) with a succeeded run of a published version: each gets
    its certificates, so a new one shows as uncertified (warm-up) from its first judgment."""
    runs = JudgeRun.objects.filter(status=JudgeRun.Status.SUCCEEDED, rubric__status=Rubric.Status.PUBLISHED)
    if rubric_ids is not None:
        runs = runs.filter(rubric_id__in=rubric_ids)
    rows = (
        runs.values("rubric_id", "model", "prompt_version", judge_name=Coalesce("judge__name", Value("")))
        .distinct()
        .order_by("rubric_id", "judge_name", "model", "prompt_version")
    )
    return [Judgments(**row) for row in rows]


def audited_pairs(*, judgments: Judgments, within_one: bool) -> dict[int, list[tuple[float, bool]]]:
    """Per criterion id, the (judge's confidence, supervisor agreed) pairs of the random audit: calls drawn by the
    audit (whatever else routed them: the only uniform sample), whose human reference (reviews.reference) was given
    beside a run of these judgments, and whose judge value exists (an unverified one always goes to review, so no
    threshold decides it). A criterion the supervisor left without a value has no pair."""
    audited = Recording.objects.filter(in_review_group(ReviewGroup.RANDOM_AUDIT), runs__rubric_id=judgments.rubric_id)
    references = human_references(recording_ids=audited.values_list("pk", flat=True).distinct())
    run_ids = {reference.run_id for reference in references.values()}
    judge = Q(run__judge__isnull=True) if not judgments.judge_name else Q(run__judge__name=judgments.judge_name)
    scores = (
        Score.objects.filter(
            JUDGE_VALUE_EXISTS,
            judge,
            run_id__in=run_ids,
            run__rubric_id=judgments.rubric_id,
            run__model=judgments.model,
            run__prompt_version=judgments.prompt_version,
        )
        .values_list("run_id", "run__recording_id", "criterion_id", "criterion__key", "value", "confidence")
        .order_by("run__recording_id", "criterion_id")
    )
    pairs: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for run_id, recording_id, criterion_id, key, value, confidence in scores:
        reference = references.get((recording_id, key))
        if reference is None or reference.run_id != run_id:
            continue  # the supervisor stood behind another run's values, or gave none for this criterion
        pairs[criterion_id].append((confidence, values_agree(value, reference.value, within_one=within_one)))
    return pairs


@dataclass(frozen=True)
class RoutingRow:
    """One criterion's line of the routing table."""

    key: str
    title: str
    judge_name: str
    model: str
    prompt_version: str
    day: date | None
    certified: bool
    threshold: float  # the certified threshold, or the rubric's fixed one where none is
    guaranteed_agreement: float | None  # the exact lower bound behind the certified threshold
    coverage: float | None  # the share of audited values the threshold keeps out of review
    pairs: int
    kept: int
    agreeing: int
    more_pairs_needed: int


@dataclass(frozen=True)
class RoutingTable:
    rubric: Rubric
    target: float
    risk: float
    tolerance: str
    fixed_threshold: float
    rows: list[RoutingRow]


def routing_table(*, rubric: Rubric) -> RoutingTable:
    """The certificates in force today for a rubric version (the caller read it in scope): per judgments it was
    judged by, each criterion's latest row. A criterion with no row yet (the beat has not run since its first
    judgment) is left out; with no rows at all, every criterion shows uncertified, with every audited pair still
    needed."""
    criteria = list(rubric.criteria.all())
    latest = (
        CertifiedThreshold.objects.filter(rubric=rubric)
        .values("judge_name", "model", "prompt_version")
        .annotate(day=Max("day"))
        .order_by("judge_name", "model", "prompt_version")
    )
    rows = []
    for group in latest:
        certificates = {
            row.criterion_id: row for row in CertifiedThreshold.objects.filter(rubric=rubric, **group)
        }
        for criterion in criteria:
            row = certificates.get(criterion.pk)
            if row is None:
                continue
            rows.append(
                RoutingRow(
                    key=criterion.key,
                    title=criterion.title,
                    judge_name=row.judge_name,
                    model=row.model,
                    prompt_version=row.prompt_version,
                    day=row.day,
                    certified=row.threshold is not None,
                    threshold=row.threshold if row.threshold is not None else rubric.review_confidence_threshold,
                    guaranteed_agreement=row.lower_bound,
                    coverage=row.coverage if row.threshold is not None else None,
                    pairs=row.pairs,
                    kept=row.kept,
                    agreeing=row.agreeing,
                    more_pairs_needed=row.more_pairs_needed,
                )
            )
    if not rows:  # never judged, or the beat has not run since: every criterion waits for its audit
        needed = pairs_to_certify(target=rubric.agreement_target, risk=rubric.agreement_risk)
        rows = [
            RoutingRow(
                key=criterion.key, title=criterion.title, judge_name="", model="", prompt_version="", day=None,
                certified=False, threshold=rubric.review_confidence_threshold, guaranteed_agreement=None,
                coverage=None, pairs=0, kept=0, agreeing=0, more_pairs_needed=needed,
            )
            for criterion in criteria
        ]  # fmt: skip
    return RoutingTable(
        rubric=rubric,
        target=rubric.agreement_target,
        risk=rubric.agreement_risk,
        tolerance=rubric.agreement_tolerance,
        fixed_threshold=rubric.review_confidence_threshold,
        rows=rows,
    )
