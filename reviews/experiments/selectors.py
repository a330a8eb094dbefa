"""Reads for experiments: which recordings a new experiment takes, its
progress, and the comparison of its arms with the supervisors' values."""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import NamedTuple

from django.db.models import Count, Q, QuerySet

from qa.models import Recording, Score
from reviews.experiments.models import Arm, Experiment, Item, ItemScore
from reviews.models import Review
from reviews.reports.selectors import Group, _group_q
from reviews.reports.stats import PairCount, PairedDelta, Triple, agreement, mae_interval, paired_bootstrap, share
from reviews.selectors import HumanReference, day_start, human_references
from rubrics.models import Criterion

FINAL_DECISIONS = (Review.Decision.APPROVE, Review.Decision.REJECT)


def experiment_recording_ids(
    *, rubric_slug: str, group: str, date_from: date | None, date_to: date | None, limit: int | None, seed: int
) -> list[int]:
    """The recordings of any version of the rubric that a final review gave human values,
    in the report group and dates; `limit` of them drawn reproducibly by `seed`."""
    recordings = Recording.objects.filter(rubric__slug=rubric_slug, reviews__decision__in=FINAL_DECISIONS)
    recordings = recordings.filter(_group_q(Group(group), "review_reasons"))
    if date_from:
        recordings = recordings.filter(occurred_at__gte=day_start(date_from))
    if date_to:
        recordings = recordings.filter(occurred_at__lt=day_start(date_to + timedelta(days=1)))
    ids = set(recordings.values_list("pk", flat=True))
    with_values = sorted({recording_id for recording_id, _ in human_references(recording_ids=ids)})
    if limit is not None and len(with_values) > limit:
        # A hash of seed and id orders them: the same seed draws the same sample whatever the query plan.
        drawn = sorted(with_values, key=lambda pk: hashlib.sha256(f"{seed}:{pk}".encode()).digest())[:limit]
        with_values = sorted(drawn)
    return with_values


@dataclass(frozen=True)
class Progress:
    done: int
    failed: int
    total: int


def experiment_progress(experiment: Experiment) -> Progress:
    counts = Item.objects.filter(arm__experiment=experiment).aggregate(
        done=Count("pk", filter=Q(status=Item.Status.SUCCEEDED)),
        failed=Count("pk", filter=Q(status=Item.Status.FAILED)),
        total=Count("pk"),
    )
    return Progress(**counts)


def experiments_list() -> QuerySet[Experiment]:
    return Experiment.objects.prefetch_related("arms__rubric", "arms__judge")


# --- The comparison -------------------------------------------------------------


class Judged(NamedTuple):
    """An arm's answer for one criterion of one recording (a tuple: a comparison reads hundreds of thousands)."""

    value: int | None
    verified: bool
    unstable: bool


ByKey = dict[str, dict[int, Judged]]  # criterion key -> recording id -> answer


@dataclass(frozen=True)
class CriterionFigures:
    criterion_key: str
    n: int  # recordings with a value from both the arm and the supervisor
    mean: float | None
    bias: float | None
    mae: float | None
    mae_ci: tuple[float, float] | None
    exact_agreement: float | None
    within_one: float | None
    qwk: float | None
    unverified_rate: float | None
    not_applicable_rate: float | None
    stability: float | None  # share of stable scores, with samples > 1
    scored: int  # recordings the arm scored on this criterion
    has_reference: bool  # False: a key the recordings' rubric versions never had (a split criterion)
    distribution: dict[int, int]  # value -> scores


@dataclass(frozen=True)
class ArmFigures:
    arm: Arm
    label: str
    rubric_version: int
    judge: str
    model: str
    samples: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None
    latency_p50_ms: int | None
    latency_p95_ms: int | None
    failed: int
    criteria: list[CriterionFigures]
    removed: list[str]  # the baseline's keys this arm's rubric no longer has


class Verdict:
    BETTER = "better"
    WORSE = "worse"
    NO_DIFFERENCE = "no_difference"
    NO_REFERENCE = "no_reference"


@dataclass(frozen=True)
class CriterionDelta:
    arm: str
    criterion_key: str
    delta: PairedDelta
    verdict: str


@dataclass(frozen=True)
class Comparison:
    experiment: Experiment
    progress: Progress
    arms: list[ArmFigures]
    deltas: list[CriterionDelta]

    def verdict_counts(self, label: str) -> Counter[str]:
        return Counter(delta.verdict for delta in self.deltas if delta.arm == label)


ENVIRONMENT_JUDGE = "environment"


def _by_key(rows: Iterable[tuple], recording_of: dict[int, int], key_of: dict[int, str]) -> ByKey:
    """(owner id, criterion id, value, verified, unstable) rows, keyed without a join per row."""
    values: defaultdict[str, dict[int, Judged]] = defaultdict(dict)
    for owner_id, criterion_id, *answer in rows:
        values[key_of[criterion_id]][recording_of[owner_id]] = Judged(*answer)
    return values


ANSWER = ("criterion_id", "value", "evidence_verified", "unstable")


def _stored_values(references: dict[tuple[int, str], HumanReference], key_of: dict[int, str]) -> ByKey:
    """The production scores each recording's review saw."""
    recording_of = {reference.run_id: rid for (rid, _), reference in references.items()}
    rows = Score.objects.filter(run_id__in=recording_of).values_list("run_id", *ANSWER)
    return _by_key(rows, recording_of, key_of)


def _item_values(arm: Arm, recording_of: dict[int, int], key_of: dict[int, str]) -> ByKey:
    rows = ItemScore.objects.filter(item__arm=arm, item__status=Item.Status.SUCCEEDED).values_list("item_id", *ANSWER)
    return _by_key(rows, recording_of, key_of)


def _criterion_figures(
    key: str, arm: Arm, values: dict[int, Judged], references: dict[int, HumanReference], has_reference: bool
) -> CriterionFigures:
    pairs = Counter(
        (judged.value, references[rid].value)
        for rid, judged in values.items()
        if judged.value is not None and rid in references and references[rid].value is not None
    )
    figures = agreement(PairCount(model, human, False, count) for (model, human), count in pairs.items())
    scored = len(values)
    return CriterionFigures(
        criterion_key=key,
        n=figures.n,
        mean=figures.model_mean,
        bias=figures.bias,
        mae=figures.mae,
        mae_ci=mae_interval(pairs),
        exact_agreement=figures.exact_agreement,
        within_one=figures.within_one,
        qwk=figures.qwk,
        unverified_rate=share(sum(not judged.verified for judged in values.values()), scored),
        not_applicable_rate=share(sum(judged.value is None for judged in values.values()), scored),
        stability=share(sum(not judged.unstable for judged in values.values()), scored) if arm.samples > 1 else None,
        scored=scored,
        has_reference=has_reference,
        distribution=dict(sorted(Counter(j.value for j in values.values() if j.value is not None).items())),
    )


def _percentile(durations: list[int], fraction: float) -> int | None:
    if not durations:
        return None
    if len(durations) == 1:
        return durations[0]
    return round(statistics.quantiles(durations, n=100, method="inclusive")[round(fraction * 100) - 1])


def _verdict(delta: PairedDelta, has_reference: bool) -> str:
    if not has_reference or delta.mae_delta_ci is None:
        return Verdict.NO_REFERENCE
    low, high = delta.mae_delta_ci
    if high < 0:
        return Verdict.BETTER
    if low > 0:
        return Verdict.WORSE
    return Verdict.NO_DIFFERENCE


def experiment_comparison(experiment: Experiment) -> Comparison:
    """Every arm against the supervisors, and every candidate against the baseline."""
    arms = list(experiment.arms.select_related("rubric", "judge"))
    references = human_references(recording_ids=experiment.recording_ids)
    by_key: defaultdict[str, dict[int, HumanReference]] = defaultdict(dict)
    for (rid, key), reference in references.items():
        by_key[key][rid] = reference
    items = Item.objects.filter(arm__experiment=experiment).values_list(
        "pk", "recording_id", "arm_id", "status", "prompt_tokens", "completion_tokens", "llm_duration_ms"
    )
    usage: defaultdict[int, list[tuple]] = defaultdict(list)
    recording_of: dict[int, int] = {}
    for item_id, recording_id, arm_id, *row in items:
        usage[arm_id].append(row)
        recording_of[item_id] = recording_id
    key_of = dict(Criterion.objects.filter(rubric__slug=experiment.rubric_slug).values_list("pk", "key"))

    arm_values: dict[int, ByKey] = {}
    figures = []
    baseline_keys = list(arms[0].rubric.criteria.values_list("key", flat=True))
    for arm in arms:
        per_key = _stored_values(references, key_of) if arm.stored else _item_values(arm, recording_of, key_of)
        arm_values[arm.pk] = per_key
        keys = list(arm.rubric.criteria.values_list("key", flat=True))
        rows = usage[arm.pk]
        prompt_tokens = sum(row[1] or 0 for row in rows)
        completion_tokens = sum(row[2] or 0 for row in rows)
        durations = sorted(row[3] for row in rows if row[0] == Item.Status.SUCCEEDED and row[3] is not None)
        cost = (
            Decimal(0)
            if arm.stored
            else arm.judge.cost(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
            if arm.judge
            else None
        )
        figures.append(
            ArmFigures(
                arm=arm,
                label=arm.label,
                rubric_version=arm.rubric.version,
                judge=arm.judge.name if arm.judge else ENVIRONMENT_JUDGE,
                model=_arm_model(arm),
                samples=arm.samples,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost=cost,
                latency_p50_ms=_percentile(durations, 0.5),
                latency_p95_ms=_percentile(durations, 0.95),
                failed=sum(row[0] == Item.Status.FAILED for row in rows),
                criteria=[
                    _criterion_figures(key, arm, per_key.get(key, {}), by_key.get(key, {}), key in by_key)
                    for key in keys
                ],
                removed=[key for key in baseline_keys if key not in keys],
            )
        )

    deltas = []
    baseline = arms[0]
    for arm in arms[1:]:
        for key in arm.rubric.criteria.values_list("key", flat=True):
            triples: Counter[Triple] = Counter()
            base_values = arm_values[baseline.pk].get(key, {})
            for rid, judged in arm_values[arm.pk].get(key, {}).items():
                reference = by_key.get(key, {}).get(rid)
                base = base_values.get(rid)
                values = (base and base.value, judged.value, reference and reference.value)
                if None not in values:
                    triples[values] += 1
            delta = paired_bootstrap(triples)
            deltas.append(CriterionDelta(arm.label, key, delta, _verdict(delta, key in by_key)))
    return Comparison(experiment=experiment, progress=experiment_progress(experiment), arms=figures, deltas=deltas)


def _arm_model(arm: Arm) -> str:
    """The model(s) the arm's calls reached; the stored baseline's are production's, whatever they were."""
    if arm.stored:
        return ""
    models = Item.objects.filter(arm=arm).exclude(model="").values_list("model", flat=True)
    return ", ".join(models.order_by("model").distinct())


# --- Drill-down: one criterion's recordings, every arm side by side ---------------------


@dataclass(frozen=True)
class ArmAnswer:
    value: int | None
    evidence: str
    verified: bool
    rationale: str
    unstable: bool


@dataclass(frozen=True)
class RecordingRow:
    recording: Recording
    human: HumanReference | None
    answers: list[ArmAnswer | None]  # one per arm, in arm order


ANSWER_FIELDS = ("value", "evidence", "evidence_verified", "rationale", "unstable")


def experiment_criterion_rows(experiment: Experiment, key: str) -> list[RecordingRow]:
    """Per recording of the set: the supervisor's value and each arm's answer on criterion `key`."""
    arms = list(experiment.arms.order_by("order"))
    references = human_references(recording_ids=experiment.recording_ids)
    answers: dict[int, dict[int, ArmAnswer]] = {}
    for arm in arms:
        if arm.stored:
            run_ids = {reference.run_id for reference in references.values()}
            rows = Score.objects.filter(run_id__in=run_ids, criterion__key=key).values_list(
                "run__recording_id", *ANSWER_FIELDS
            )
        else:
            rows = ItemScore.objects.filter(
                item__arm=arm, item__status=Item.Status.SUCCEEDED, criterion__key=key
            ).values_list("item__recording_id", *ANSWER_FIELDS)
        answers[arm.pk] = {rid: ArmAnswer(*fields) for rid, *fields in rows}
    recordings = Recording.objects.filter(pk__in=experiment.recording_ids).only("pk", "external_id", "source")
    return [
        RecordingRow(
            recording=recording,
            human=references.get((recording.pk, key)),
            answers=[answers[arm.pk].get(recording.pk) for arm in arms],
        )
        for recording in recordings.order_by("pk")
    ]
