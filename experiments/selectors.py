"""Reads for experiments: which recordings a new experiment takes, its
progress, and the comparison of its arms with the supervisors' values."""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import NamedTuple

from django.db import connection
from django.db.models import Count, Q, QuerySet, Sum, Value
from django.db.models.expressions import RawSQL

from access.scope import Scope
from core.sql import queryset_sql
from qa.models import Recording, Score, judge_value_exists
from qa.routing import ReviewGroup, in_review_group
from disputes.selectors import upheld_dispute_recordings
from experiments.models import Arm, Experiment, Item, ItemScore
from reviews.filters import Group, days_q
from reviews.figures.stats import (
    Agreement,
    PairCount,
    PairedDelta,
    Triple,
    agreement,
    mae_interval,
    paired_bootstrap,
    share,
)
from reviews.reference import FINAL_DECISIONS, HumanReference, human_reference_rows
from rubrics.models import Criterion

# Beside the reports' groups: the calls with an upheld dispute, where a QA lead found the agent right and the
# review wrong, the labels most worth testing a candidate on.
DISPUTED = "disputed"
EXPERIMENT_GROUPS = [*(member.value for member in Group), DISPUTED]


def experiment_recording_ids(
    *, rubric_slug: str, group: str, date_from: date | None, date_to: date | None, limit: int | None, seed: int
) -> list[int]:
    """The recordings of any version of the rubric that a final review gave human values,
    in the report group and dates; `limit` of them drawn reproducibly by `seed`."""
    recordings = Recording.objects.filter(
        rubric__slug=rubric_slug, reviews__decision__in=FINAL_DECISIONS, reviews__void__isnull=True
    )
    if group == DISPUTED:
        recordings = recordings.filter(pk__in=upheld_dispute_recordings().values("pk"))
    elif group != Group.ALL:
        recordings = recordings.filter(in_review_group(ReviewGroup(group)))
    recordings = recordings.filter(days_q(date_from, date_to))
    references_sql, params = queryset_sql(human_reference_rows(recording_ids=recordings.values("pk")))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT recording_id FROM ({references_sql}) AS human", params)
        with_values = sorted(recording_id for (recording_id,) in cursor.fetchall())
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


def experiment_criterion_titles(experiment: Experiment) -> dict[str, str]:
    """Criterion key -> title, as the first arm (the baseline) words it; a key only a candidate has, as
    that candidate does. Keys stay the arms' common identity: a rewritten criterion keeps its key."""
    titles: dict[str, str] = {}
    for arm in experiment.arms.order_by("order").prefetch_related("rubric__criteria"):
        for criterion in arm.rubric.criteria.all():
            titles.setdefault(criterion.key, criterion.title)
    return titles


def experiments_list(*, scope: Scope) -> QuerySet[Experiment]:
    """The experiments of the workspaces in `scope` where it sees every call; every read of experiments
    starts here. A team-limited supervisor sees none: an experiment's figures and calls are the sample's,
    any team's, and cutting them by team would change what the comparison measures."""
    return Experiment.objects.filter(scope.whole_workspaces_q()).prefetch_related("arms__rubric", "arms__judge")


# --- The comparison -------------------------------------------------------------


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
    # The experiment measures the judge, so an unverified value is compared too, but each figure is also
    # given apart for verified and unverified quotes: a candidate that "agrees" by quotes it invented shows.
    verified: Agreement
    unverified: Agreement


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
    cached_tokens: int = 0
    calls: int = 0  # items whose judgment reported its tokens
    cost_per_call: Decimal | None = None  # what a cheaper judge that agrees as well saves on each call


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


@dataclass
class Tallies:
    """One arm's answers on one criterion, counted: everything its figures derive from."""

    pairs: Counter[tuple[int, int]] = field(default_factory=Counter)  # (arm value, human value) -> recordings
    # The same pairs split by whether the arm's quote verified.
    split: dict[bool, Counter[tuple[int, int]]] = field(default_factory=lambda: {True: Counter(), False: Counter()})
    triples: Counter[Triple] = field(default_factory=Counter)  # (baseline, arm, human value) -> recordings
    distribution: Counter[int] = field(default_factory=Counter)  # arm value -> recordings
    scored: int = 0
    unverified: int = 0
    not_applicable: int = 0
    unstable: int = 0


REFERENCE_ROW = 0  # no arm has this id


class Cell(NamedTuple):
    """A row of the comparison's count: how many recordings one arm answered alike on one criterion."""

    arm_id: int | None  # None: recordings an arm did not answer; REFERENCE_ROW: a criterion with a human reference
    criterion_key: str
    value: int | None
    verified: bool | None
    unstable: bool | None
    human: int | None  # the human reference's value: None where it is N/A or there is none
    baseline: int | None  # the baseline's value on the same recording, for a candidate arm
    count: int


def _stored_runs(human: str, params: Iterable = ()) -> RawSQL:
    """The judgments a stored baseline's answers are the production scores of: per recording, the one
    its human reference was given on (the latest, if a calibration session and a later review saw
    different ones). `human` names rows of `human_reference_rows` in SQL."""
    return RawSQL(f"SELECT MAX(reference_run_id) FROM {human} GROUP BY recording_id", tuple(params))


def _comparison_cells(experiment: Experiment, arms: list[Arm]) -> list[Cell]:
    """Every arm's answers counted in the database by criterion, value, verified, unstable, the human
    reference's value and the baseline's value: a few thousand rows for any number of recordings.

    The recordings are the frozen set, taken from the items of a re-judged arm (every arm but a stored
    baseline has one per recording) so the database reads them as a subquery, not a list of thousands.
    """
    judged_arm = next(arm for arm in arms if not arm.stored)
    recordings = Item.objects.filter(arm=judged_arm).values("recording_id")
    human_sql, human_params = queryset_sql(human_reference_rows(recording_ids=recordings))
    answered = ("criterion__key", "value", "evidence_verified", "unstable")
    parts = []
    for arm in arms:
        if arm.stored:
            scores = Score.objects.filter(run_id__in=_stored_runs("human")).values_list(
                Value(arm.pk), "run__recording_id", *answered
            )
        else:
            scores = ItemScore.objects.filter(item__arm=arm, item__status=Item.Status.SUCCEEDED).values_list(
                "item__arm_id", "item__recording_id", *answered
            )
        parts.append(queryset_sql(scores.order_by()))
    # One row per recording and criterion with the human value and every arm's answer side by side
    # (a GROUP BY, where joins of the arms on recording and key made the database sort them all),
    # then each arm's answers counted from it.
    per_arm = [
        f"MAX(CASE WHEN arm_id = {arm.pk} THEN 1 END) AS answered_{index}, "
        f"MAX(CASE WHEN arm_id = {arm.pk} THEN value END) AS value_{index}, "
        f"MAX(CASE WHEN arm_id = {arm.pk} AND verified THEN 1 ELSE 0 END) AS verified_{index}, "
        f"MAX(CASE WHEN arm_id = {arm.pk} AND unstable THEN 1 ELSE 0 END) AS unstable_{index}"
        for index, arm in enumerate(arms)
    ]
    # Grouped by whether the arm answered rather than filtered on it: the planner cannot estimate such
    # a filter on a computed table, and guessing a few rows it sorts them all where it would hash.
    counts = [
        f"""SELECT answered_{index} * {arm.pk}, criterion_key, value_{index}, verified_{index}, unstable_{index},
                   human, {"value_0" if index else "NULL"}, COUNT(*)
            FROM paired
            GROUP BY answered_{index}, criterion_key, value_{index}, verified_{index}, unstable_{index},
                     human{", value_0" if index else ""}"""
        for index, arm in enumerate(arms)
    ]
    sql = f"""
        WITH human (recording_id, criterion_key, value, not_applicable, source, review_id, reference_run_id) AS (
            {human_sql}
        ),
        answers (arm_id, recording_id, criterion_key, value, verified, unstable) AS (
            {" UNION ALL ".join(part for part, _ in parts)}
        ),
        paired AS (
            SELECT recording_id, criterion_key, MAX(CASE WHEN arm_id IS NULL THEN value END) AS human,
                   {", ".join(per_arm)}
            FROM (
                SELECT NULL AS arm_id, recording_id, criterion_key, value, NULL AS verified, NULL AS unstable FROM human
                UNION ALL
                SELECT * FROM answers
            ) AS every_value
            GROUP BY recording_id, criterion_key
        )
        {" UNION ALL ".join(counts)}
        UNION ALL
        SELECT {REFERENCE_ROW}, criterion_key, NULL, NULL, NULL, NULL, NULL, COUNT(*) FROM human GROUP BY criterion_key
    """
    params = [*human_params, *(param for _, part_params in parts for param in part_params)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Cell(*row) for row in cursor.fetchall()]


def _tallies(cells: list[Cell]) -> tuple[dict[tuple[int, str], Tallies], set[str]]:
    """Per (arm id, criterion key) its tallies, and the keys that have a human reference."""
    tallies: defaultdict[tuple[int, str], Tallies] = defaultdict(Tallies)
    referenced = set()
    for cell in cells:
        if cell.arm_id == REFERENCE_ROW:
            referenced.add(cell.criterion_key)
            continue
        if cell.arm_id is None:  # recordings that arm did not answer
            continue
        tally, count = tallies[(cell.arm_id, cell.criterion_key)], cell.count
        tally.scored += count
        tally.unverified += 0 if cell.verified else count
        tally.unstable += count if cell.unstable else 0
        if cell.value is None:
            tally.not_applicable += count
            continue
        tally.distribution[cell.value] += count
        if cell.human is not None:
            tally.pairs[(cell.value, cell.human)] += count
            tally.split[judge_value_exists(evidence_verified=bool(cell.verified))][(cell.value, cell.human)] += count
            if cell.baseline is not None:
                tally.triples[(cell.baseline, cell.value, cell.human)] += count
    # The bootstrap draws cells in the order given: sorted, the same counts give the same interval
    # whatever order the database returned them in.
    for tally in tallies.values():
        tally.pairs = Counter(dict(sorted(tally.pairs.items())))
        tally.triples = Counter(dict(sorted(tally.triples.items())))
    return tallies, referenced


def _agreement(pairs: Counter[tuple[int, int]]) -> Agreement:
    """(arm value, human value) -> recordings, compared."""
    return agreement(PairCount(model, human, False, count) for (model, human), count in pairs.items())


def _criterion_figures(key: str, arm: Arm, tally: Tallies, has_reference: bool) -> CriterionFigures:
    figures = _agreement(tally.pairs)
    return CriterionFigures(
        criterion_key=key,
        n=figures.n,
        mean=figures.model_mean,
        bias=figures.bias,
        mae=figures.mae,
        mae_ci=mae_interval(tally.pairs),
        exact_agreement=figures.exact_agreement,
        within_one=figures.within_one,
        qwk=figures.qwk,
        unverified_rate=share(tally.unverified, tally.scored),
        not_applicable_rate=share(tally.not_applicable, tally.scored),
        stability=share(tally.scored - tally.unstable, tally.scored) if arm.samples > 1 else None,
        scored=tally.scored,
        has_reference=has_reference,
        distribution=dict(sorted(tally.distribution.items())),
        verified=_agreement(tally.split[True]),
        unverified=_agreement(tally.split[False]),
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


@dataclass(frozen=True)
class Usage:
    """What an arm's calls cost, summed over its items."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0
    failed: int = 0
    durations: list[int] = field(default_factory=list)  # of the succeeded calls, in ms, ascending
    models: list[str] = field(default_factory=list)  # the models the calls reached


def _usage(experiment: Experiment) -> dict[int, Usage]:
    items = Item.objects.filter(arm__experiment=experiment)
    sums = (
        items.values("arm_id")
        .annotate(
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            cached=Sum("cached_tokens"),
            calls=Count("pk", filter=Q(prompt_tokens__isnull=False)),
            failed=Count("pk", filter=Q(status=Item.Status.FAILED)),
        )
        .order_by()
    )
    durations: defaultdict[int, list[int]] = defaultdict(list)
    for arm_id, duration in (
        items.filter(status=Item.Status.SUCCEEDED, llm_duration_ms__isnull=False)
        .order_by("llm_duration_ms")
        .values_list("arm_id", "llm_duration_ms")
    ):
        durations[arm_id].append(duration)
    models: defaultdict[int, list[str]] = defaultdict(list)
    for arm_id, model in items.exclude(model="").order_by("arm_id", "model").values_list("arm_id", "model").distinct():
        models[arm_id].append(model)
    return {
        row["arm_id"]: Usage(
            prompt_tokens=row["prompt"] or 0,
            completion_tokens=row["completion"] or 0,
            cached_tokens=row["cached"] or 0,
            calls=row["calls"],
            failed=row["failed"],
            durations=durations[row["arm_id"]],
            models=models[row["arm_id"]],
        )
        for row in sums
    }


def experiment_comparison(experiment: Experiment) -> Comparison:
    """Every arm against the supervisors, and every candidate against the baseline, in a fixed number
    of queries: the answers are counted in the database against the human reference, and every
    figure (the bootstrap's included) is computed from those counts."""
    arms = list(experiment.arms.select_related("rubric", "judge"))
    tallies, referenced = _tallies(_comparison_cells(experiment, arms))
    usage = _usage(experiment)
    keys_of: defaultdict[int, list[str]] = defaultdict(list)
    for rubric_id, key in Criterion.objects.filter(rubric_id__in={arm.rubric_id for arm in arms}).values_list(
        "rubric_id", "key"
    ):
        keys_of[rubric_id].append(key)

    figures = []
    baseline_keys = keys_of[arms[0].rubric_id]
    for arm in arms:
        keys = keys_of[arm.rubric_id]
        used = usage.get(arm.pk, Usage())
        cost = (
            Decimal(0)
            if arm.stored
            else arm.judge.cost(
                prompt_tokens=used.prompt_tokens, completion_tokens=used.completion_tokens, cached_tokens=used.cached_tokens
            )
            if arm.judge
            else None
        )
        figures.append(
            ArmFigures(
                arm=arm,
                label=arm.label,
                rubric_version=arm.rubric.version,
                judge=arm.judge.name if arm.judge else ENVIRONMENT_JUDGE,
                # A stored baseline's models are production's, whatever they were.
                model="" if arm.stored else ", ".join(used.models),
                samples=arm.samples,
                prompt_tokens=used.prompt_tokens,
                completion_tokens=used.completion_tokens,
                cost=cost,
                cached_tokens=used.cached_tokens,
                calls=used.calls,
                cost_per_call=cost / used.calls if cost is not None and used.calls else None,
                latency_p50_ms=_percentile(used.durations, 0.5),
                latency_p95_ms=_percentile(used.durations, 0.95),
                failed=used.failed,
                criteria=[
                    _criterion_figures(key, arm, tallies.get((arm.pk, key), Tallies()), key in referenced)
                    for key in keys
                ],
                removed=[key for key in baseline_keys if key not in keys],
            )
        )

    deltas = []
    for arm in arms[1:]:
        for key in keys_of[arm.rubric_id]:
            delta = paired_bootstrap(tallies.get((arm.pk, key), Tallies()).triples)
            deltas.append(CriterionDelta(arm.label, key, delta, _verdict(delta, key in referenced)))
    return Comparison(experiment=experiment, progress=experiment_progress(experiment), arms=figures, deltas=deltas)


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


def experiment_criterion_rows(
    experiment: Experiment, key: str, *, recording_ids: Sequence[int] | None = None
) -> list[RecordingRow]:
    """Per recording of the set (or of `recording_ids`, a page of it), by id: the supervisor's value
    and each arm's answer on criterion `key`; a stored baseline's answers are read from the
    judgments the comparison reads them from. Only the recordings asked for are read."""
    ids = sorted(experiment.recording_ids if recording_ids is None else recording_ids)
    arms = list(experiment.arms.order_by("order"))
    human_sql, human_params = queryset_sql(human_reference_rows(recording_ids=ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT recording_id, human_value, human_not_applicable, source, review_id, reference_run_id
                FROM ({human_sql}) AS human WHERE criterion_key = %s""",
            [*human_params, key],
        )
        references = {
            recording_id: HumanReference(value, bool(not_applicable), source, review_id, run_id)
            for recording_id, value, not_applicable, source, review_id, run_id in cursor.fetchall()
        }
    answers: dict[int, dict[int, ArmAnswer]] = {}
    for arm in arms:
        if arm.stored:
            runs = _stored_runs(f"({human_sql}) AS human", human_params)
            rows = Score.objects.filter(run_id__in=runs, criterion__key=key).values_list(
                "run__recording_id", *ANSWER_FIELDS
            )
        else:
            rows = ItemScore.objects.filter(
                item__arm=arm, item__status=Item.Status.SUCCEEDED, item__recording_id__in=ids, criterion__key=key
            ).values_list("item__recording_id", *ANSWER_FIELDS)
        answers[arm.pk] = {rid: ArmAnswer(*fields) for rid, *fields in rows}
    recordings = Recording.objects.filter(pk__in=ids).only("pk", "external_id", "source")
    return [
        RecordingRow(
            recording=recording,
            human=references.get(recording.pk),
            answers=[answers[arm.pk].get(recording.pk) for arm in arms],
        )
        for recording in recordings.order_by("pk")
    ]
