"""The human ceiling: how well supervisors agree with each other on a criterion,
beside how well the judge agrees with them (ETS's RSMTool reports the same
"degradation" for automated scoring).

Human–human pairs come from two places, never mixed with the judge:
    closed calibration sessions on the rubric version: every pair of
    participants on a call; and calls two or more supervisors reviewed
    independently: the first review of a call and every later blind review
    (a blind reviewer sees neither the judge's values nor earlier reviews'),
    one per person. A later review that was not blind saw the earlier ones and
    does not count.
Pairs are pooled over calls and counted both ways round (raters differ from
call to call), and their QWK is the ceiling.

The judge is compared with the human reference (`reviews.reference.human_references`):
the agreed value of a closed session where there is one, else the latest
final review; on the judgment that reference was given on.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date

from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils.translation import gettext as _

from core.sql import queryset_sql
from qa.models import Recording, Score
from reviews.models import CalibrationSession, CalibrationValue, Review
from reviews.figures.stats import pooled_pair_matrix, quadratic_weighted_kappa
from reviews.reference import FINAL_DECISIONS, human_reference_rows, review_values
from rubrics.models import Criterion, Rubric


@dataclass(frozen=True)
class CriterionCeiling:
    criterion: Criterion
    judge_human_qwk: float | None  # the judge against the human reference
    judge_human_n: int  # calls with a number from both
    agreed_n: int  # of those, calls whose reference is an agreed value
    human_human_qwk: float | None  # None: no human–human data, which is not zero agreement
    human_human_n: int  # calls with numbers from two or more people who did not see each other's
    degradation: float | None  # judge_human_qwk − human_human_qwk

    @property
    def reading(self) -> str:
        if self.human_human_n == 0:
            return _(
                "No human–human data yet: close a calibration session, or have two supervisors review the same "
                "calls independently."
            )
        if self.human_human_qwk is None:
            return _("The supervisors gave one and the same value on every call they share: no QWK to compare.")
        if self.judge_human_qwk is None:
            return _(
                "Supervisors agree with each other at %(qwk)s; there is no judge–human QWK to compare (no pairs, or "
                "one and the same value on both sides)."
            ) % {"qwk": f"{self.human_human_qwk:.2f}"}
        gap = round(self.degradation, 2)
        if gap == 0:
            return _("The judge agrees with supervisors as well as they agree with each other.")
        if gap > 0:
            return _("The judge agrees with supervisors %(gap)s above how well they agree with each other.") % {
                "gap": f"{gap:.2f}"
            }
        return _("The judge agrees with supervisors %(gap)s below how well they agree with each other.") % {
            "gap": f"{-gap:.2f}"
        }


def criterion_ceiling(
    criterion: Criterion, *, judge_pairs: Counter, human_pairs: Counter, human_units: int
) -> CriterionCeiling:
    """One criterion's row from its counts: `judge_pairs` keyed (source, judge value, reference value),
    `human_pairs` the supervisors' pooled pairs (both ways round) over `human_units` calls."""
    judge_human = quadratic_weighted_kappa(Counter({(judge, human): n for (_s, judge, human), n in judge_pairs.items()}))
    human_human = quadratic_weighted_kappa(human_pairs)
    return CriterionCeiling(
        criterion=criterion,
        judge_human_qwk=judge_human,
        judge_human_n=judge_pairs.total(),
        agreed_n=sum(n for (source, _j, _h), n in judge_pairs.items() if source == "agreed"),
        human_human_qwk=human_human,
        human_human_n=human_units,
        degradation=None if judge_human is None or human_human is None else judge_human - human_human,
    )


AgentDay = tuple[str, str, date | None]  # a call's team, agent id and day (None: no time): what the rollups keep apart


def _days() -> tuple[str, list]:
    """The SQL of a call's day in the current time zone, over the recordings' table by its name, and its
    parameters: the ORM's TruncDate, so that a day here is a day everywhere."""
    query = Recording.objects.all().query
    compiler = query.get_compiler(connection=connection)
    sql, params = TruncDate("occurred_at").resolve_expression(query).as_sql(compiler, connection)
    return sql, list(params)


def judge_pairs_by_agent(recording_ids: QuerySet | list[int]) -> defaultdict[AgentDay, defaultdict[str, Counter]]:
    """(reference source, judge value, reference value) counted per team, agent, day and criterion key: the
    human references (`reviews.reference.human_reference_rows`, the SQL form of `human_references`) beside
    the judge's value on the run each reference was given on, counted in the database. Reading the
    references and the runs' scores into Python took 20 s over a million scores (bench/dashboard/README.md)."""
    pairs: defaultdict[AgentDay, defaultdict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    if not isinstance(recording_ids, QuerySet) and not recording_ids:
        return pairs  # no SQL for an empty list: the raw statement below cannot be written for none
    if isinstance(recording_ids, QuerySet):  # a subquery: first the calls with a reference, fewer
        agreed = Q(
            calibration_calls__agreed_values__isnull=False,
            calibration_calls__session__status=CalibrationSession.Status.CLOSED,
        )
        recording_ids = Recording.objects.filter(
            Q(reviews__decision__in=FINAL_DECISIONS, reviews__void__isnull=True) | agreed, pk__in=recording_ids
        ).values("pk")
    references = human_reference_rows(recording_ids=recording_ids)
    references_sql, params = queryset_sql(references)
    q = connection.ops.quote_name
    scores, criteria = q(Score._meta.db_table), q(Criterion._meta.db_table)
    recordings = q(Recording._meta.db_table)
    day, day_params = _days()  # over the recordings' table, named as such below
    sql = (
        f"SELECT {recordings}.team, {recordings}.agent_id, {day}, refs.criterion_key, refs.source, s.value,"
        f" refs.human_value, COUNT(*)"
        f" FROM ({references_sql}) refs"
        f" JOIN {recordings} ON {recordings}.id = refs.recording_id"
        f" JOIN {scores} s ON s.run_id = refs.reference_run_id"
        f" JOIN {criteria} c ON c.id = s.criterion_id AND c.{q('key')} = refs.criterion_key"
        f" WHERE s.value IS NOT NULL AND refs.human_value IS NOT NULL"
        f" GROUP BY 1, 2, 3, 4, 5, 6, 7"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*day_params, *params])
        for team, agent_id, on, key, source, model, human, count in cursor.fetchall():
            pairs[(team, agent_id, _date(on))][key][(source, model, human)] += count
    return pairs


def _date(value: date | str | None) -> date | None:
    """A day from a raw row: a date on PostgreSQL, its text on SQLite."""
    return date.fromisoformat(value[:10]) if isinstance(value, str) else value


def human_pairs_by_agent(
    rubric: Rubric, recording_ids: QuerySet
) -> defaultdict[AgentDay, dict[str, tuple[Counter, int]]]:
    """Per team, agent, day and criterion key, the supervisors' pooled pairs (`pooled_pair_matrix`) and the
    calls they come from. Pairs add up over calls, so a period's are the sum of its agents' days."""
    ratings: defaultdict[str, dict[tuple, dict]] = defaultdict(dict)  # criterion key -> unit -> rater -> value
    _add_calibration_ratings(ratings, rubric, recording_ids)
    _add_independent_review_ratings(ratings, recording_ids)
    units: defaultdict[AgentDay, defaultdict[str, dict[tuple, dict]]] = defaultdict(lambda: defaultdict(dict))
    wanted = {unit[-1] for by_unit in ratings.values() for unit, values in by_unit.items() if len(values) >= 2}
    agents = {
        pk: (team, agent_id, day)
        for pk, team, agent_id, day in Recording.objects.filter(pk__in=wanted).values_list(
            "pk", "team", "agent_id", TruncDate("occurred_at")
        )
    }
    for key, by_unit in ratings.items():
        for unit, values in by_unit.items():
            if len(values) >= 2:
                units[agents[unit[-1]]][key][unit] = values
    return defaultdict(
        dict,
        {
            agent: {key: (pooled_pair_matrix(by_unit), len(by_unit)) for key, by_unit in by_key.items()}
            for agent, by_key in units.items()
        },
    )


def _add_calibration_ratings(ratings: defaultdict, rubric: Rubric, recording_ids: QuerySet) -> None:
    """Each closed session on the rubric version: one unit per call (its recording last), one rater per
    participant."""
    rows = CalibrationValue.objects.filter(
        entry__call__session__rubric=rubric,
        entry__call__session__status=CalibrationSession.Status.CLOSED,
        entry__call__recording_id__in=recording_ids,
        value__isnull=False,
    ).values_list("criterion__key", "entry__call_id", "entry__call__recording_id", "entry__participant_id", "value")
    for key, call_id, recording_id, participant_id, value in rows:
        ratings[key].setdefault(("calibration", call_id, recording_id), {})[participant_id] = value


def _add_independent_review_ratings(ratings: defaultdict, recording_ids: QuerySet) -> None:
    """Calls reviewed more than once: the first review and every later blind one, one per person."""
    several = (
        Review.objects.filter(recording_id__in=recording_ids)
        .values("recording_id")
        .annotate(n=Count("pk"))
        .filter(n__gte=2)
        .values("recording_id")
    )
    independent: dict[int, tuple[int, str]] = {}  # review id -> (recording id, the person)
    people: defaultdict[int, set[str]] = defaultdict(set)
    for review in Review.objects.filter(recording_id__in=several).order_by("recording_id", "created_at", "pk"):
        person = f"user:{review.user_id}" if review.user_id else f"name:{review.reviewer}"
        first = not people[review.recording_id]
        if (first or review.blind) and person not in people[review.recording_id]:
            independent[review.pk] = (review.recording_id, person)
            people[review.recording_id].add(person)
    rows = review_values(reviews=Review.objects.filter(pk__in=[pk for pk, _ in independent.items()]))
    for row in rows:
        if row["human"] is not None:
            recording_id, person = independent[row["review_id"]]
            ratings[row["key"]].setdefault(("reviews", recording_id), {})[person] = row["human"]
