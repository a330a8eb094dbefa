"""The scorecard estimator's sums (`reviews.figures.stats.CellSample`: per stratum, a `StratumSample`) per
group of calls, read two ways: from the calls themselves (`call_samples`), or from their rollups per
agent-week and agent-day (`rollup_samples`: `ScorecardWeek`, `ScorecardDay`), which
`insights.scorecards.services.scorecard_weeks_refresh` keeps from the calls with `call_samples`. A page sums
the rollup's weeks that its period covers whole, and the days at either end (`period_split`).

From the calls: one GROUP BY query returns additive sums per group and stratum, per criterion and overall.
It reads one row per call: the values stored with it (`Recording.current_values`, set by the judging), its
current run's unverified scores, and its human references (`reviews.reference.human_reference_rows`).

Which calls count, per criterion
    Each recording's current run (its latest successful judgment). Its stratum: flagged when its routing
    flagged a doubt (`qa.routing.ReviewGroup.FLAGGED`) or any of its current scores is unverified, else plain.
    Known: a human reference with a number (a supervisor's or a calibration's N/A is no number: the call
    leaves the criterion's figures). Estimated: no human reference, and the judge's value exists
    (`qa.models.JUDGE_VALUE_EXISTS`: its quote verified). Waiting: no human reference and an unverified judge
    value, which is no value: counted apart. The judge's N/A with no human reference: left out.
    Audited: those in the random-audit group whose human references all judged the current run; their
    pairs (human, judge) need the judge's value to exist. Flagged calls in the audit correct the flagged
    stratum only.

Overall (the quality score)
    Per call, its quality score (`rubrics.quality`, in SQL by `quality_sql`: sections, weights, N/A and the
    auto-fail as the rubric says): the judge's from the judge's values that exist (a call with an unverified
    value has none, unless a verified critical failure zeroes it, and waits as unverified), the human's from
    the human references. The estimator then runs on those per-call numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from django.db import connection, transaction
from django.db.models import (
    BigIntegerField,
    Case,
    Expression,
    F,
    Func,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import TruncDate, TruncWeek
from django.db.models.lookups import Exact

from core.sql import queryset_sql
from qa.models import JUDGE_VALUE_EXISTS, Recording, Score
from qa.routing import ReviewGroup, in_review_group
from insights.models import ScorecardDay, ScorecardWeek
from reviews.figures.stats import CellSample, StratumSample
from reviews.filters import days_q
from reviews.periods import PeriodSplit
from reviews.reference import human_reference_rows
from rubrics.models import Criterion, Rubric
from rubrics.quality import SqlValue, quality_sql
from rubrics.selectors import rubric_quality_policy

OVERALL = "overall"


def _kind(part: Any) -> type | None:
    """The class of a StratumSample field's sums (Moments, Pairs); None for a count."""
    return None if isinstance(part.default, int) else part.default_factory


def _flat(part: Any) -> list[str]:
    """A StratumSample field as ScorecardWeek's columns: a count as it is, sums as `<part>_<sum>`."""
    kind = _kind(part)
    return [part.name] if kind is None else [f"{part.name}_{inner.name}" for inner in fields(kind)]


PARTS = [part.name for part in fields(StratumSample)]
MOMENT_FIELDS = [column for part in fields(StratumSample) for column in _flat(part)]  # ScorecardWeek's


# Groupings -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where a grouping finds a call's team, agent, week and day: on the call, or on a rollup row."""

    team: Expression
    agent_id: Expression
    week: Expression
    day: Expression | None = None  # None on a week's row


def on_calls(prefix: str = "") -> Place:
    """The call reached through `prefix`."""
    occurred = f"{prefix}occurred_at"
    return Place(F(f"{prefix}team"), F(f"{prefix}agent_id"), TruncWeek(occurred), TruncDate(occurred))


ON_WEEKS = Place(F("team"), F("agent_id"), F("week"))
ON_DAYS = Place(F("team"), F("agent_id"), TruncWeek("day"), F("day"))

# A grouping: GROUP BY expressions, by name, over a place. Every cell of a page is a sum of its groups' samples.
Grouping = Callable[[Place], dict[str, Expression]]


def by_agent(place: Place) -> dict[str, Expression]:
    return {"team": place.team, "agent_id": place.agent_id}


def by_agent_day(place: Place) -> dict[str, Expression]:
    """Per team, agent and day: what the refresh writes the rollups' rows from."""
    return {"team": place.team, "agent_id": place.agent_id, "day": place.day}


def by_week_around(agent_id: str) -> Grouping:
    """Per week and team, the agent's calls apart from the others': an agent's page sums the agent's calls
    (in the teams its reader sees), their team's and the rubric's."""

    def grouping(place: Place) -> dict[str, Expression]:
        return {"week": place.week, "is_agent": Exact(place.agent_id, agent_id), "team": place.team}

    return grouping


def _grouped(rows: QuerySet, groups: dict[str, Expression], *names: str, **columns: Expression) -> QuerySet:
    """values() of the group keys, the model's fields `names` and `columns`; a key that is the model's own
    field is named as such."""
    own = [name for name, expression in groups.items() if isinstance(expression, F) and expression.name == name]
    return rows.values(*own, *names, **{name: groups[name] for name in groups if name not in own}, **columns)


@dataclass(frozen=True)
class Samples:
    cells: dict[tuple[tuple, str], CellSample]  # by group and column key
    agent_names: dict[str, str]  # by agent id, when the groups are agents: read in the same pass
    group_names: dict[tuple, str] = field(default_factory=dict)  # by group, when the groups are agents

    def __add__(self, other: Samples) -> Samples:
        cells = dict(self.cells)
        for cell, sample in other.cells.items():
            cells[cell] = cells[cell] + sample if cell in cells else sample
        names = _greatest(self.agent_names, other.agent_names)
        return Samples(cells, names, _greatest(self.group_names, other.group_names))


def _greatest(names: dict, more: dict) -> dict:
    """Both name maps, the greatest name where both have the key, as MAX() keeps one."""
    merged = dict(names)
    for key, name in more.items():
        merged[key] = max(merged.get(key, name), name)
    return merged


NO_SAMPLES = Samples({}, {})


# From the rollup -----------------------------------------------------------------------------------------


def sample_fields(sample: StratumSample) -> dict[str, float]:
    """A stratum's sums as ScorecardWeek's fields."""
    values = {}
    for part in fields(StratumSample):
        value = getattr(sample, part.name)
        if isinstance(value, int):
            values[part.name] = value
        else:
            values |= {f"{part.name}_{inner.name}": getattr(value, inner.name) for inner in fields(value)}
    return values


# Per StratumSample field: its class (None for a count) and its columns, in order.
_STRATUM_LAYOUT = [(_kind(part), _flat(part)) for part in fields(StratumSample)]


@lru_cache(maxsize=256)
def _stratum_keys(prefix: str) -> list[tuple[type | None, str, list[str]]]:
    """_STRATUM_LAYOUT's columns with `prefix`: built once per prefix, as a page reads thousands of rows."""
    return [(kind, prefix + columns[0], [prefix + name for name in columns[1:]]) for kind, columns in _STRATUM_LAYOUT]


def _stratum_of(row: dict[str, Any], prefix: str = "") -> StratumSample:
    """A stratum's sums from a row's columns `<prefix><ScorecardWeek's field>` (NULL sums as zeros)."""
    parts = []
    for kind, count, sums in _stratum_keys(prefix):
        if kind is None:
            parts.append(int(row[count] or 0))
        else:
            parts.append(kind(int(row[count] or 0), *[float(row[name] or 0) for name in sums]))
    return StratumSample(*parts)


def rollup_samples(rubric: Rubric, split: PeriodSplit, grouping: Grouping, where: Q = Q()) -> Samples:
    """Each group's sample per column key, summed from the rollups' rows of `split` (those `where` selects: a
    team, an agent, a scope): its whole weeks' rows, and its edges' days' rows. Two queries at most."""
    samples = NO_SAMPLES
    if split.whole_weeks:
        weeks = ScorecardWeek.objects.filter(where, rubric=rubric).order_by()
        if split.first_week:
            weeks = weeks.filter(week__gte=split.first_week)
        if split.last_week:
            weeks = weeks.filter(week__lte=split.last_week)  # either bound leaves out the calls with no time
        samples = _summed(weeks, grouping(ON_WEEKS))
    if split.edges:
        days = Q()
        for first, last in split.edges:
            days |= Q(day__gte=first, day__lte=last)
        samples += _summed(ScorecardDay.objects.filter(days, where, rubric=rubric).order_by(), grouping(ON_DAYS))
    return samples


DATED_KEYS = ("week", "day")  # the group keys that are days: a date whichever way a backend returns them


def _dated(value: Any) -> Any:
    """A day as a date: a raw row gives PostgreSQL's date_trunc of a date as a datetime, and SQLite's text."""
    if isinstance(value, datetime):
        return value.date()
    return date.fromisoformat(value[:10]) if isinstance(value, str) else value


def _summed(rows: QuerySet, groups: dict[str, Expression]) -> Samples:
    """Rollup rows summed per group, column and stratum: one query.

    Read as the cursor's tuples, not through the ORM's rows: a page reads up to ten thousand of these rows of
    thirty columns, and the ORM's per-value converters and dicts cost more than the query did
    (bench/scorecards/README.md). The sums arrive as numbers (NULL as None), which `_stratum_at` reads."""
    keys = list(groups)
    named = "agent_id" in keys
    sums = {name: Sum(name) for name in MOMENT_FIELDS} | ({"agent_name": Max("agent_name")} if named else {})
    query = _grouped(rows, groups, "column_key", "flagged").annotate(**sums)
    sql, params = queryset_sql(query)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [column[0] for column in cursor.description]
        found = cursor.fetchall()
    place = {name: index for index, name in enumerate(names)}
    key_at = [(place[key], key in DATED_KEYS) for key in keys]
    column_at, flagged_at = place["column_key"], place["flagged"]
    parts_at = _stratum_positions(tuple(names))
    name_at = place.get("agent_name")
    agent_at = place.get("agent_id")
    cells: dict[tuple[tuple, str], CellSample] = {}
    agent_names: dict[str, str] = {}
    for row in found:
        cell = (tuple(_dated(row[at]) if dated else row[at] for at, dated in key_at), row[column_at])
        # One row per group, column and stratum: each stratum is set, not added.
        setattr(cells.setdefault(cell, CellSample()), "flagged" if row[flagged_at] else "plain", _stratum_at(row, parts_at))
        if named:
            agent, name = row[agent_at], row[name_at]
            agent_names[agent] = max(agent_names.get(agent, name), name)
    return Samples(cells, agent_names)


@lru_cache(maxsize=64)
def _stratum_positions(names: tuple[str, ...]) -> list[tuple[type | None, int, list[int]]]:
    """_STRATUM_LAYOUT's columns as positions in a row with the columns `names`: once per query shape."""
    place = {name: index for index, name in enumerate(names)}
    return [(kind, place[columns[0]], [place[name] for name in columns[1:]]) for kind, columns in _STRATUM_LAYOUT]


def _stratum_at(row: tuple, positions: list[tuple[type | None, int, list[int]]]) -> StratumSample:
    """A stratum's sums from a raw row's numbers at `positions` (NULL sums as zeros), as `_stratum_of`."""
    parts = []
    for kind, count, sums in positions:
        if kind is None:
            parts.append(int(row[count] or 0))
        else:
            parts.append(kind(int(row[count] or 0), *[float(row[at] or 0) for at in sums]))
    return StratumSample(*parts)


# From the calls ------------------------------------------------------------------------------------------


class StoredNotApplicable(Func):
    """1 where the JSON object column holds null at `key` (the judge's N/A, as `Recording.current_values`
    keeps it), else 0 (a number there, or no key: no value)."""

    output_field = IntegerField()

    def __init__(self, column: str, key: str) -> None:
        self.key = key
        super().__init__(F(column))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, tuple]:
        column, params = compiler.compile(self.source_expressions[0])
        return f"(CASE WHEN JSON_TYPE({column}, %s) = 'null' THEN 1 ELSE 0 END)", (*params, f'$."{self.key}"')

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, tuple]:
        column, params = compiler.compile(self.source_expressions[0])
        return f"(CASE WHEN jsonb_typeof(({column}) -> %s) = 'null' THEN 1 ELSE 0 END)", (*params, self.key)


class StoredValue(Func):
    """The integer at `key` in a JSON object column of values per criterion key (NULL where absent or null).
    Not KeyTextTransform: on PostgreSQL it reads a key of digits, which a criterion's slug may be, as an
    array index."""

    output_field = IntegerField()

    def __init__(self, column: str, key: str) -> None:
        self.key = key
        super().__init__(F(column))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, tuple]:
        column, params = compiler.compile(self.source_expressions[0])
        return f"JSON_EXTRACT({column}, %s)", (*params, f'$."{self.key}"')

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, tuple]:
        column, params = compiler.compile(self.source_expressions[0])
        return f"(({column}) ->> %s)::integer", (*params, self.key)


# The calls a read covers, as a condition on the call reached through a path prefix.
Calls = Callable[[str], Q]


def judged_calls(rubric: Rubric, since: date | None = None, until: date | None = None) -> Calls:
    """The rubric's judged calls from `since` to `until` (days, both included), any team and agent."""

    def calls(prefix: str) -> Q:
        judged = Q(**{f"{prefix}rubric": rubric, f"{prefix}current_run__isnull": False})
        return judged & days_q(since, until, prefix=prefix)

    return calls


def _rows(sql: str, params: Iterable[Any]) -> list[dict[str, Any]]:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A hundred sums over a hundred thousand rows have a cost that switches JIT compilation on,
            # and compiling them takes longer than running them; the groups (and the audited calls, which
            # PostgreSQL may sort to group) stay in memory (bench/scorecards/README.md).
            cursor.execute("SET LOCAL jit = off")
            cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(sql, list(params))
        names = [column[0] for column in cursor.description]  # DB-API: the name first, on every backend
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        if connection.vendor == "postgresql":
            # Inside a caller's transaction the savepoint does not end the settings: set them back, or every
            # later query of that transaction would plan with them.
            cursor.execute("SET LOCAL jit TO DEFAULT; SET LOCAL work_mem TO DEFAULT")
        return rows


def _fenced(sql: str) -> str:
    """`sql` as a subquery the planner runs as written, once per row: OFFSET 0 keeps PostgreSQL and SQLite from
    merging it into the query around it, which would compute each of its columns once per sum that uses it.
    (A MATERIALIZED CTE does the same but stores every row first: twice the time, bench/scorecards.)"""
    no_limit = connection.ops.no_limit_value()  # SQLite takes an OFFSET only after a LIMIT
    limit = "" if no_limit is None else f"LIMIT {no_limit} "
    return f"({sql} {limit}OFFSET 0)"


def _moment_sums(name: str, value: str) -> dict[str, str]:
    return {
        f"{name}_n": f"COUNT({value})",
        f"{name}_total": f"SUM({value})",
        f"{name}_squares": f"SUM(({value}) * ({value}))",
    }


def _pair_sums(name: str, human: str, judge: str) -> dict[str, str]:
    return {
        f"{name}_n": f"COUNT({human})",
        f"{name}_human": f"SUM({human})",
        f"{name}_judge": f"SUM({judge})",
        f"{name}_human_squares": f"SUM(({human}) * ({human}))",
        f"{name}_judge_squares": f"SUM(({judge}) * ({judge}))",
        f"{name}_products": f"SUM(({human}) * ({judge}))",
    }


def _stratum_sums(name: str) -> dict[str, str]:
    """The sums of a StratumSample for one column, from the per-call columns `j_`, `u_`, `h_` and `c_<name>`
    (the verified judge value, the unverified one, the human value, and 1 where a human reference covers
    the call), and `audited`."""
    q = connection.ops.quote_name
    judge, unverified, human, covered = (q(f"{side}_{name}") for side in ("j", "u", "h", "c"))
    audited = q("audited")
    estimated = f"CASE WHEN {covered} IS NULL THEN {judge} END"
    # A pair needs both values: x + 0 * y is NULL when y is.
    pair_human = f"CASE WHEN {audited} = 1 THEN {human} + 0 * {judge} END"
    pair_judge = f"CASE WHEN {audited} = 1 THEN {judge} + 0 * {human} END"
    return {
        **_moment_sums(f"{name}__judged", judge),
        f"{name}__unverified_n": f"COUNT({unverified})",
        **_moment_sums(f"{name}__known", human),
        **_moment_sums(f"{name}__estimated", estimated),
        f"{name}__waiting_n": f"COUNT(CASE WHEN {covered} IS NULL THEN {unverified} END)",
        **_moment_sums(f"{name}__human", f"CASE WHEN {audited} = 1 THEN {human} END"),
        **_pair_sums(f"{name}__audit", pair_human, pair_judge),
    }


MASK_BITS = 62  # criteria per bit mask: a bigint's, short of its sign


def _unverified_masks(columns: dict[str, Criterion]) -> dict[str, Subquery]:
    """Which of the current run's scores have a value that does not exist (`JUDGE_VALUE_EXISTS`), as bit masks
    (criterion i is bit i % MASK_BITS of mask i // MASK_BITS; NULL: none): one index range on the run's scores
    per call, where joining the unverified scores made PostgreSQL read every score of every run."""
    masks = {}
    criteria = list(columns.values())
    for chunk in range(0, len(criteria), MASK_BITS):
        bits = [
            When(criterion_id=criterion.pk, then=Value(1 << offset))
            for offset, criterion in enumerate(criteria[chunk : chunk + MASK_BITS])
        ]
        scores = Score.objects.filter(
            ~JUDGE_VALUE_EXISTS, run_id=OuterRef("current_run_id"), value__isnull=False
        ).order_by()
        # A run scores each criterion once, so the sum of their bits is the mask.
        mask = scores.values("run_id").annotate(
            mask=Sum(Case(*bits, default=Value(0), output_field=BigIntegerField()))
        )
        masks[f"unverified_mask_{chunk // MASK_BITS}"] = Subquery(mask.values("mask"), output_field=BigIntegerField())
    return masks


def call_samples(rubric: Rubric, calls: Calls, grouping: Grouping) -> Samples:
    """Each group's sample per column key, from the calls: one query whatever the number of groups.

    The query reads one row per call with its current run's unverified scores (a bit mask) and its human
    references (joined, one row per reviewed call), works out per call and column which
    value counts where (a fenced subquery per step, so each is computed once per call, not once per sum
    that uses it) and sums per group and stratum: the sums of every column at once.
    """
    q = connection.ops.quote_name
    criteria = list(rubric.criteria.all())
    columns = {f"k{index}": criterion for index, criterion in enumerate(criteria)}
    keys = list(grouping(on_calls()))
    named = "agent_id" in keys
    chosen = Recording.objects.filter(calls("")).order_by()
    judged = _grouped(
        # One table, so PostgreSQL estimates its rows well (a join on run.recording.current_run = run it
        # takes for a handful).
        chosen,
        grouping(on_calls()),
        "id",
        "current_run_id",
        *(["agent_name"] if named else []),
        routed_flagged=Case(When(in_review_group(ReviewGroup.FLAGGED), then=Value(1)), default=Value(0)),
        routed_audit=Case(When(in_review_group(ReviewGroup.RANDOM_AUDIT), then=Value(1)), default=Value(0)),
        **{f"judge_{name}": StoredValue("current_values", criterion.key) for name, criterion in columns.items()},
        **{f"judge_na_{name}": StoredNotApplicable("current_values", criterion.key) for name, criterion in columns.items()},
        **_unverified_masks(columns),
    )
    # The human references, one row per reviewed call: a number or N/A per criterion, and the runs judged.
    references_sql, references_params = queryset_sql(human_reference_rows(recording_ids=chosen.values("pk")))
    pivot, pivot_params = [], []
    for name, criterion in columns.items():
        pivot.append(f"MAX(CASE WHEN criterion_key = %s THEN human_value END) AS {q(f'reference_{name}')}")
        pivot.append(
            f"MAX(CASE WHEN criterion_key = %s AND human_not_applicable THEN 1 END) AS {q(f'not_applicable_{name}')}"
        )
        pivot_params += [criterion.key, criterion.key]
    references = (
        f"SELECT recording_id, MIN(reference_run_id) AS reference_run_low, MAX(reference_run_id) AS reference_run_high,"
        f" {', '.join(pivot)} FROM ({references_sql}) refs GROUP BY recording_id"
    )
    judged_sql, judged_params = queryset_sql(judged)
    joined = (
        f"SELECT calls.*, r.* FROM {_fenced(judged_sql)} calls"
        f" LEFT JOIN ({references}) r ON r.recording_id = calls.id"
    )
    params = [*judged_params, *pivot_params, *references_params]
    masks = [name for name in judged.query.annotations if name.startswith("unverified_mask_")]
    unverified_any = f"({' OR '.join([f'{q(mask)} IS NOT NULL' for mask in masks] or ['1 = 0'])})"

    # Per call: its stratum, whether it counts as audited, and per criterion the four columns.
    per_call = [
        f"CASE WHEN routed_flagged = 1 OR {unverified_any} THEN 1 ELSE 0 END AS {q('flagged')}",
        f"CASE WHEN routed_audit = 1 AND reference_run_low = current_run_id AND reference_run_high = current_run_id"
        f" THEN 1 END AS {q('audited')}",
        f"CASE WHEN {unverified_any} THEN 1 END AS {q('unverified_any')}, recording_id AS {q('reviewed')}",
        *(q(key) for key in keys),
        *([q("agent_name")] if named else []),
    ]
    for index, name in enumerate(columns):
        judge = q(f"judge_{name}")
        mask, bit = q(f"unverified_mask_{index // MASK_BITS}"), 1 << (index % MASK_BITS)
        unverified = f"COALESCE({mask} & {bit}, 0) <> 0"
        reference, not_applicable = q(f"reference_{name}"), q(f"not_applicable_{name}")
        per_call += [
            f"{judge}",
            f"CASE WHEN NOT {unverified} THEN {judge} END AS {q(f'j_{name}')}",
            f"CASE WHEN {unverified} THEN {judge} END AS {q(f'u_{name}')}",
            f"{reference} AS {q(f'h_{name}')}",
            f"{q(f'judge_na_{name}')} AS {q(f'n_{name}')}",
            f"CASE WHEN {not_applicable} IS NOT NULL THEN 1 ELSE 0 END AS {q(f'hn_{name}')}",
            f"CASE WHEN {reference} IS NOT NULL OR {not_applicable} IS NOT NULL THEN 1 END AS {q(f'c_{name}')}",
        ]
    policy = rubric_quality_policy(rubric)

    def quality(value: str, not_applicable: str) -> str:
        return quality_sql(
            policy,
            {c.key: SqlValue(q(f"{value}_{name}"), f"{q(f'{not_applicable}_{name}')} = 1") for name, c in columns.items()},
        )

    judge_quality = quality("j", "n")  # the values that exist: an unverified one is none
    overall = [
        f"{judge_quality} AS {q(f'j_{OVERALL}')}",
        # Without a score by the values that exist: waiting, scored by the model's numbers to be counted.
        f"CASE WHEN unverified_any IS NOT NULL AND {judge_quality} IS NULL THEN {quality('judge', 'n')} END"
        f" AS {q(f'u_{OVERALL}')}",
        f"{quality('h', 'hn')} AS {q(f'h_{OVERALL}')}",
        f"CASE WHEN reviewed IS NOT NULL THEN 1 END AS {q(f'c_{OVERALL}')}",
    ]
    per_call_sql = _fenced(f"SELECT {', '.join(per_call)} FROM {_fenced(joined)} joined")
    figures = _fenced(f"SELECT figures.*, {', '.join(overall)} FROM {per_call_sql} figures")
    names = [*columns, OVERALL]
    sums = {"agent_name": "MAX(agent_name)"} if named else {}
    for name in names:
        sums |= _stratum_sums(name)
    grouped = ", ".join(q(key) for key in [*keys, "flagged"])
    selected = ", ".join(f"{expression} AS {q(alias)}" for alias, expression in sums.items())
    rows = _rows(f"SELECT {grouped}, {selected} FROM {figures} calls GROUP BY {grouped}", params)

    samples: dict[tuple[tuple, str], CellSample] = {}
    agent_names: dict[str, str] = {}
    group_names: dict[tuple, str] = {}
    for row in rows:
        group = tuple(row[key] for key in keys)
        stratum = "flagged" if row["flagged"] else "plain"
        for name in names:
            cell = (group, columns[name].key if name in columns else OVERALL)
            setattr(samples.setdefault(cell, CellSample()), stratum, _stratum_of(row, f"{name}__"))
        if named:
            agent_names[row["agent_id"]] = max(agent_names.get(row["agent_id"], row["agent_name"]), row["agent_name"])
            group_names[group] = max(group_names.get(group, row["agent_name"]), row["agent_name"])
    return Samples(samples, agent_names, group_names)
