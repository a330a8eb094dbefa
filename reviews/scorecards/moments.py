"""The scorecard estimator's moments (`reviews.reports.stats.CellSample`) per group of calls, read two ways:
from the calls themselves (`call_samples`), or from their weekly rollup (`week_samples`,
`reviews.models.ScorecardWeek`), which `reviews.scorecards.services.scorecard_weeks_refresh` keeps from
the calls with `call_samples`. A page sums the rollup's weeks that its period covers whole, and the calls
of the days at either end (`period_split`).

From the calls: two GROUP BY queries (the judge's values, and the audited pairs) return additive moments
per group, per criterion and overall. They read one row per call, the values stored with it
(`Recording.current_values`, set by the judging, and the review's `human_values`), not the scores.

Which calls count
    Judged: each recording's current run (its latest successful judgment), with a value (a criterion the
    judge found not applicable has none).
    Audited: those of them in the random-audit group whose latest review is final and judged that current
    run; the human value is the human reference's rule (`review_values`, stored on the review), a
    supervisor's N/A is no value. Flagged calls are not a random sample and never correct anything.

Overall
    Per call, the weighted mean of its criteria (the criteria's weights) on a 0–100 scale (each value as a
    share of its criterion's scale), over the criteria that have a value: the judge's from the judge's
    values, the human's from the human values. The estimator then runs on those per-call numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Expression, F, Func, IntegerField, Max, Q, QuerySet, Sum
from django.db.models.functions import TruncWeek
from django.db.models.lookups import Exact
from django.utils import timezone

from qa.models import Recording
from qa.routing import ReviewGroup, in_review_group
from reviews.models import Review, ScorecardWeek
from reviews.reports.stats import CellSample, Moments
from reviews.selectors import FINAL_DECISIONS, day_start, latest_reviews
from rubrics.models import Criterion, Rubric

OVERALL = "overall"
PARTS = [part.name for part in fields(CellSample)]  # judged, human, difference, paired_human
MOMENT_FIELDS = [f"{part}_{moment.name}" for part in PARTS for moment in fields(Moments)]  # ScorecardWeek's


# Weeks ---------------------------------------------------------------------------------------------------


def week_of(moment: datetime | None) -> date | None:
    """The Monday of the week `moment` falls in, in the current time zone (as `day_start` draws days)."""
    if moment is None:
        return None
    day = timezone.localtime(moment).date()
    return day - timedelta(days=day.weekday())


@dataclass(frozen=True)
class PeriodSplit:
    """A period as the rollup's whole weeks (Mondays from `first_week` to `last_week`, None: unbounded) and
    the partial weeks' days at either end (`edges`, each a first and last day), read from the calls."""

    whole_weeks: bool
    first_week: date | None = None
    last_week: date | None = None
    edges: list[tuple[date, date]] = field(default_factory=list)


def period_split(since: date | None, until: date | None) -> PeriodSplit:
    """The period from `since` to `until` (days, both included; None: unbounded) as whole weeks and edges."""
    first = since + timedelta(days=(7 - since.weekday()) % 7) if since else None  # the first Monday from `since`
    last = until - timedelta(days=(until.weekday() + 1) % 7 + 6) if until else None  # the last whole week's
    if first and last and first > last:
        return PeriodSplit(whole_weeks=False, edges=[(since, until)])
    edges = []
    if since and since < first:
        edges.append((since, first - timedelta(days=1)))
    if until and until > last + timedelta(days=6):
        edges.append((last + timedelta(days=7), until))
    return PeriodSplit(whole_weeks=True, first_week=first, last_week=last, edges=edges)


# Groupings -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where a grouping finds a call's team, agent and week: on the call, or on a rollup row."""

    team: Expression
    agent_id: Expression
    week: Expression


def on_calls(prefix: str = "") -> Place:
    """The call reached through `prefix`."""
    return Place(F(f"{prefix}team"), F(f"{prefix}agent_id"), TruncWeek(f"{prefix}occurred_at"))


ON_WEEKS = Place(F("team"), F("agent_id"), F("week"))

# A grouping: GROUP BY expressions, by name, over a place. Every cell of a page is a sum of its groups' samples.
Grouping = Callable[[Place], dict[str, Expression]]


def by_agent(place: Place) -> dict[str, Expression]:
    return {"team": place.team, "agent_id": place.agent_id}


def by_week_around(agent_id: str, team: str) -> Grouping:
    def grouping(place: Place) -> dict[str, Expression]:
        return {"week": place.week, "is_agent": Exact(place.agent_id, agent_id), "in_team": Exact(place.team, team)}

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

    def __add__(self, other: Samples) -> Samples:
        cells = dict(self.cells)
        for cell, sample in other.cells.items():
            cells[cell] = cells[cell] + sample if cell in cells else sample
        names = dict(self.agent_names)
        for agent_id, name in other.agent_names.items():
            names[agent_id] = max(names.get(agent_id, name), name)  # the greatest, as MAX() keeps one
        return Samples(cells, names)


NO_SAMPLES = Samples({}, {})


# From the rollup -----------------------------------------------------------------------------------------


def sample_fields(sample: CellSample) -> dict[str, float]:
    """A sample as ScorecardWeek's fields."""
    return {
        f"{part}_{moment.name}": getattr(getattr(sample, part), moment.name)
        for part in PARTS
        for moment in fields(Moments)
    }


def _sample_of(row: dict[str, Any]) -> CellSample:
    return CellSample(*(_moments(row, part) for part in PARTS))


def week_samples(rubric: Rubric, split: PeriodSplit, grouping: Grouping) -> Samples:
    """Each group's sample per column key, summed from the rollup's weeks of `split`: one query."""
    if not split.whole_weeks:
        return NO_SAMPLES
    weeks = ScorecardWeek.objects.filter(rubric=rubric).order_by()
    if split.first_week:
        weeks = weeks.filter(week__gte=split.first_week)
    if split.last_week:
        weeks = weeks.filter(week__lte=split.last_week)  # either bound leaves out the calls with no time
    groups = grouping(ON_WEEKS)
    keys = list(groups)
    named = "agent_id" in keys
    sums = {name: Sum(name) for name in MOMENT_FIELDS} | ({"agent_name": Max("agent_name")} if named else {})
    cells, agent_names = {}, {}
    for row in _grouped(weeks, groups, "column_key").annotate(**sums):
        cells[(tuple(row[key] for key in keys), row["column_key"])] = _sample_of(row)
        if named:
            agent_names[row["agent_id"]] = row["agent_name"]
    return Samples(cells, agent_names)


# From the calls ------------------------------------------------------------------------------------------


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
        if since:
            judged &= Q(**{f"{prefix}occurred_at__gte": day_start(since)})
        if until:
            judged &= Q(**{f"{prefix}occurred_at__lt": day_start(until + timedelta(days=1))})
        return judged

    return calls


def _audited_reviews(calls: Calls) -> QuerySet[Review]:
    """The final reviews that are the latest of a judged call of the random-audit group and judged its
    current run. From the review, so that "the latest" is a NOT EXISTS on the review itself, which PostgreSQL
    runs as one anti-join (from the recording it checked each call's reviews one by one, three times dearer)."""
    return (
        latest_reviews(decisions=FINAL_DECISIONS)
        .filter(
            calls("recording__"),
            in_review_group(ReviewGroup.RANDOM_AUDIT, "recording__review_reasons"),
            run=F("recording__current_run"),
        )
        .order_by()
    )


def _real(number: float) -> str:
    return f"CAST({float(number)!r} AS DOUBLE PRECISION)"


def _overall(criteria: list[Criterion], columns: list[str]) -> str:
    """SQL for a call's overall from its per-criterion columns: the weighted mean share (0–100) of each
    value on its criterion's scale, over the criteria with a value. Constants in double precision: with
    PostgreSQL's numeric (what a literal 1.0 is), the query cost half as much again."""
    shares, weights = [], []
    for criterion, column in zip(criteria, columns, strict=True):
        per_point = 100.0 * criterion.weight / (criterion.scale_max - criterion.scale_min)
        shares.append(f"COALESCE(({column} - {criterion.scale_min}) * {_real(per_point)}, {_real(0)})")
        weights.append(f"CASE WHEN {column} IS NULL THEN {_real(0)} ELSE {_real(criterion.weight)} END")
    return f"({' + '.join(shares)}) / NULLIF({' + '.join(weights)}, {_real(0)})"


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
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _fenced(sql: str) -> str:
    """`sql` as a subquery the planner runs as written, once per row: OFFSET 0 keeps PostgreSQL and SQLite from
    merging it into the query around it, which would compute each of its columns once per sum that uses it.
    (A MATERIALIZED CTE does the same but stores every row first: twice the time, bench/scorecards.)"""
    no_limit = connection.ops.no_limit_value()  # SQLite takes an OFFSET only after a LIMIT
    limit = "" if no_limit is None else f"LIMIT {no_limit} "
    return f"({sql} {limit}OFFSET 0)"


def _per_group(calls: QuerySet, keys: list[str], overalls: dict[str, str], sums: dict[str, str]) -> list[dict]:
    """Sum per-call figures per group. `calls` has one row per call, with the group keys and a value
    column per criterion; `overalls` are SQL over those columns, `sums` SQL over both, all plain
    identifiers. Each step is a fenced subquery, so a value read from JSON or an overall is computed once
    per call, not once per sum that uses it."""
    quote = connection.ops.quote_name
    calls_sql, params = calls.query.get_compiler(using=calls.db).as_sql()
    grouped = ", ".join(quote(key) for key in keys)
    with_overalls = ", ".join(f"{expression} AS {quote(name)}" for name, expression in overalls.items())
    selected = ", ".join(f"{expression} AS {quote(name)}" for name, expression in sums.items())
    figures = _fenced(f"SELECT calls.*, {with_overalls} FROM {_fenced(calls_sql)} calls")
    return _rows(f"SELECT {grouped}, {selected} FROM {figures} figures GROUP BY {grouped}", params)


def _moment_sums(name: str, value: str) -> dict[str, str]:
    return {
        f"{name}_n": f"COUNT({value})",
        f"{name}_total": f"SUM({value})",
        f"{name}_squares": f"SUM(({value}) * ({value}))",
    }


def _moments(row: dict[str, Any], name: str) -> Moments:
    return Moments(row[f"{name}_n"] or 0, float(row[f"{name}_total"] or 0), float(row[f"{name}_squares"] or 0))


def call_samples(rubric: Rubric, calls: Calls, grouping: Grouping) -> Samples:
    """Each group's sample per column key, from the calls: two queries whatever the number of groups.

    Each query reads one row per call (the values stored with it: `Recording.current_values` and the
    review's `human_values`), computes the call's overall and sums per group: the moments of every
    column at once.
    """
    criteria = list(rubric.criteria.all())
    columns = {f"k{index}": criterion.key for index, criterion in enumerate(criteria)}
    names = [*columns, "overall"]
    keys = list(grouping(on_calls()))
    samples: dict[tuple[tuple, str], CellSample] = {}

    def column_key(name: str) -> str:
        return columns.get(name, OVERALL)

    def stored(side: str, column: str) -> dict[str, Expression]:
        return {f"{side}_{name}": StoredValue(column, key) for name, key in columns.items()}

    def overall(side: str) -> dict[str, str]:
        return {f"{side}_overall": _overall(criteria, [f"{side}_{name}" for name in columns])}

    named = "agent_id" in keys
    judged = _grouped(
        # One table, so PostgreSQL estimates its rows well (a join on run.recording.current_run = run it
        # takes for a handful).
        Recording.objects.filter(calls("")).order_by(),
        grouping(on_calls()),
        *(["agent_name"] if named else []),
        **stored("judge", "current_values"),
    )
    sums = {"agent_name": "MAX(agent_name)"} if named else {}
    for name in names:
        sums |= _moment_sums(f"judged_{name}", f"judge_{name}")
    agent_names = {}
    for row in _per_group(judged, keys, overall("judge"), sums):
        group = tuple(row[key] for key in keys)
        for name in names:
            samples[(group, column_key(name))] = CellSample(judged=_moments(row, f"judged_{name}"))
        if named:
            agent_names[row["agent_id"]] = row["agent_name"]

    audited = _grouped(
        _audited_reviews(calls),
        grouping(on_calls("recording__")),
        **stored("judge", "recording__current_values"),
        **stored("human", "human_values"),
    )
    sums = {}
    for name in names:
        human, judge = f"human_{name}", f"judge_{name}"
        sums |= _moment_sums(f"human_{name}", human)
        sums |= _moment_sums(f"difference_{name}", f"{human} - {judge}")
        sums |= _moment_sums(f"paired_{name}", f"{human} + 0 * {judge}")  # null unless the judge has a value
    for row in _per_group(audited, keys, overall("judge") | overall("human"), sums):
        group = tuple(row[key] for key in keys)
        for name in names:
            cell = (group, column_key(name))  # an audited call is a judged call of the same group
            samples[cell] = CellSample(
                judged=samples[cell].judged,
                human=_moments(row, f"human_{name}"),
                difference=_moments(row, f"difference_{name}"),
                paired_human=_moments(row, f"paired_{name}"),
            )
    return Samples(samples, agent_names)
