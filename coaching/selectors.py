"""Reads for coaching. A session is read like the agent's calls: a QA lead or admin of its workspace, a
supervisor of its team (or of every team), the agent themselves (access.scope's recordings_q on the session's
workspace, team and agent id). Systems' keys read no session (a session is between people)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from access import Capability
from access.models import Role
from access.scope import Scope, scope_for
from coaching.effect import CriterionEffect, Difference, criterion_effect, mean_difference
from coaching.models import CoachingSession
from insights.scorecards.moments import by_agent
from insights.scorecards.selectors import period_samples
from qa.models import JUDGE_VALUE_EXISTS, Recording, Score
from reviews.figures.stats import CellSample
from reviews.filters import ReportFilters
from reviews.selectors import blind_recordings_for
from rubrics.models import Criterion, Rubric

PROPOSED_PER_CRITERION = 3


def _visible_q(scope: Scope) -> Q:
    # source=None: a session carries no source, so a source-bound grant reads none.
    return scope.recordings_q(source=None)


def _readers_scope(user: AbstractBaseUser) -> Scope:
    """Who reads sessions: where the person may coach (a supervisor's teams, a QA lead's or admin's workspace),
    and as an agent their own. A rubric owner, who reads scorecards, reads no session: what a coach said to an
    agent is between them and the agent's coaches (privacy fails closed)."""
    scope = scope_for(user)
    if scope.everything:
        return scope
    coaching = scope.where(Capability.COACH).grants
    agents = tuple(grant for grant in scope.grants if grant.role == Role.AGENT)
    return Scope(grants=coaching + agents)


def sessions_visible(*, user: AbstractBaseUser) -> QuerySet[CoachingSession]:
    return CoachingSession.objects.filter(_visible_q(_readers_scope(user)))


def sessions_as_agent(*, user: AbstractBaseUser) -> QuerySet[CoachingSession]:
    """The sessions about `user` as an agent, and no one else's (their agent memberships only)."""
    scope = scope_for(user)
    as_agent = Scope(grants=tuple(grant for grant in scope.grants if grant.role == Role.AGENT))
    return CoachingSession.objects.filter(_visible_q(as_agent))


def sessions_list(*, user: AbstractBaseUser, state: str = "") -> QuerySet[CoachingSession]:
    """The sessions the reader may see; `state`: "open", "due" (open and its follow-up date has come) or
    "closed"; anything else: every one."""
    sessions = sessions_visible(user=user).select_related("coach", "rubric").prefetch_related("criteria__criterion")
    today = timezone.localdate()
    if state == "open":
        sessions = sessions.filter(status=CoachingSession.Status.OPEN)
    elif state == "due":
        sessions = sessions.filter(status=CoachingSession.Status.OPEN, follow_up_on__lte=today)
    elif state == "closed":
        sessions = sessions.filter(status=CoachingSession.Status.CLOSED)
    return sessions.order_by("follow_up_on", "-id") if state in ("open", "due") else sessions


def session_get(*, user: AbstractBaseUser, pk: int) -> CoachingSession:
    """One session the reader may see; CoachingSession.DoesNotExist otherwise (another agent's is not found)."""
    return (
        sessions_visible(user=user)
        .select_related("coach", "rubric", "acknowledged_by")
        .prefetch_related("criteria__criterion", "calls__score__criterion", "calls__recording", "comments__author")
        .get(pk=pk)
    )


def agent_team(*, rubric: Rubric, agent_id: str, scope: Scope) -> dict | None:
    """The team of most of the agent's judged calls on the rubric that the reader may see, with the agent's
    name and the count; None when the reader sees none of their calls."""
    return (
        Recording.objects.filter(scope.recordings_q(), rubric=rubric, agent_id=agent_id, current_run__isnull=False)
        .values("team")
        .annotate(calls=Count("pk"), name=Max("agent_name"))
        .order_by("-calls", "team")
        .first()
    )


def coachable_scores(*, rubric: Rubric, agent_id: str, scope: Scope, viewer: AbstractBaseUser | None) -> QuerySet[Score]:
    """The agent's current judge values on the rubric whose quote verified (an unverified value is no
    evidence, so never one to coach with), in the reader's scope and not blind to them, lowest first."""
    calls = Recording.objects.filter(scope.recordings_q(), rubric=rubric, agent_id=agent_id)
    if viewer is not None:
        calls = calls.exclude(pk__in=blind_recordings_for(viewer).values("pk"))
    return (
        Score.objects.filter(JUDGE_VALUE_EXISTS, value__isnull=False, run__in=calls.values("current_run_id"))
        .select_related("criterion", "run__recording")
        .order_by("value", "-run__recording__occurred_at", "-pk")
    )


def proposed_scores(
    *, rubric: Rubric, agent_id: str, criterion_keys: list[str], scope: Scope, viewer: AbstractBaseUser | None
) -> list[Score]:
    """Per criterion, the agent's PROPOSED_PER_CRITERION worst verified values: the calls to coach with."""
    scores = coachable_scores(rubric=rubric, agent_id=agent_id, scope=scope, viewer=viewer)
    found: list[Score] = []
    for key in criterion_keys:
        found += list(scores.filter(criterion__key=key)[:PROPOSED_PER_CRITERION])
    return found


def due_count(*, user: AbstractBaseUser, today: date | None = None) -> int:
    today = today or timezone.localdate()
    return sessions_visible(user=user).filter(status=CoachingSession.Status.OPEN, follow_up_on__lte=today).count()


def rubric_for_coaching(*, user: AbstractBaseUser, key: str | int) -> Rubric:
    """A rubric of a workspace where the reader may coach, by primary key, or by slug (its latest published
    version, as the scorecards name it); Rubric.DoesNotExist otherwise."""
    rubrics = Rubric.objects.filter(scope_for(user).where(Capability.COACH).workspaces_q())
    if isinstance(key, int) or str(key).isdigit():
        return rubrics.get(pk=int(key))
    found = rubrics.filter(slug=str(key), status=Rubric.Status.PUBLISHED).order_by("-version").first()
    if found is None:
        raise Rubric.DoesNotExist(key)
    return found


def recording_for_coaching(*, user: AbstractBaseUser, pk: int) -> Recording:
    """A judged call the reader may see, in a workspace where they may coach: the start of a session from a
    reviewed call. Recording.DoesNotExist otherwise."""
    scope = scope_for(user).where(Capability.COACH)
    return Recording.objects.filter(scope.recordings_q(), current_run__isnull=False).select_related("rubric").get(pk=pk)


@dataclass(frozen=True)
class Periods:
    before: tuple[date, date]
    after: tuple[date, date] | None  # None until the session's first day is over... or has begun
    live: bool  # before the follow-up date: the after period runs to today


def periods_of(session: CoachingSession, today: date | None = None) -> Periods:
    """After: from the session's day to its follow-up date (to today, live, before then). Before: as many days
    just before the session, so the before period stays the same while the after one grows."""
    today = today or timezone.localdate()
    start = timezone.localdate(session.created_at)
    length = max((session.follow_up_on - start).days, 1)
    before = (start - timedelta(days=length), start - timedelta(days=1))
    end = min(today, session.follow_up_on)
    return Periods(before=before, after=(start, end) if end >= start else None, live=today < session.follow_up_on)


@dataclass(frozen=True)
class EffectRow:
    criterion: Criterion
    effect: CriterionEffect


def session_effect(*, session: CoachingSession, today: date | None = None) -> tuple[Periods, list[EffectRow]]:
    """Per coached criterion, the effect (coaching.effect) over the session's periods. The session was read in
    scope; its figures come from every call of the rubric, as a scorecard's corrections do (the agent's team's
    and the rubric's audit pools), and show only the agent's and the rest of their team's estimates."""
    periods = periods_of(session, today)

    def cells(period: tuple[date, date] | None) -> dict[str, tuple[CellSample, CellSample, CellSample]]:
        if period is None:
            return {}
        filters = ReportFilters(rubric=session.rubric, date_from=period[0], date_to=period[1], scope=None)
        found: dict[str, list[CellSample]] = defaultdict(lambda: [CellSample(), CellSample(), CellSample()])
        for ((team, agent_id), column), sample in period_samples(filters, by_agent).cells.items():
            parts = found[column]
            if team == session.team and agent_id == session.agent_id:
                parts[0] += sample
            elif team == session.team:
                parts[1] += sample
            parts[2] += sample
        return {column: tuple(parts) for column, parts in found.items()}

    before, after = cells(periods.before), cells(periods.after)
    empty = (CellSample(), CellSample(), CellSample())
    rows = []
    for coached in session.criteria.all():
        criterion = coached.criterion
        b, a = before.get(criterion.key, empty), after.get(criterion.key, empty)
        rows.append(
            EffectRow(
                criterion,
                criterion_effect(
                    before=b[0], after=a[0], team_before=b[1], team_after=a[1], rubric_before=b[2], rubric_after=a[2],
                    scale=(criterion.scale_min, criterion.scale_max),
                ),  # fmt: skip
            )
        )
    return periods, rows


SUMMARY_SESSIONS = 30  # the latest sessions whose after period has begun: each costs two reads of the calls


@dataclass(frozen=True)
class SummaryRow:
    criterion: str  # its title
    coach: str  # "" on a criterion's row over every coach
    sessions: int  # sessions whose effect has an interval, of those counted
    effect: Difference


def coaching_summary(*, user: AbstractBaseUser, today: date | None = None) -> list[SummaryRow]:
    """What coaching has done so far: per criterion, and per coach and criterion, the mean effect (the
    difference-in-differences) of the latest SUMMARY_SESSIONS sessions the reader may coach, with its interval.
    Only the reader's coaching grants count: an agent's own sessions never enter a team's figures."""
    today = today or timezone.localdate()
    coaching = Scope(grants=scope_for(user).where(Capability.COACH).grants) if not scope_for(user).everything else scope_for(user)
    sessions = (
        CoachingSession.objects.filter(_visible_q(coaching), created_at__date__lte=today)
        .select_related("coach", "rubric")
        .prefetch_related("criteria__criterion")
        .order_by("-created_at", "-id")[:SUMMARY_SESSIONS]
    )
    by_criterion: defaultdict[str, list[Difference]] = defaultdict(list)
    by_coach: defaultdict[tuple[str, str], list[Difference]] = defaultdict(list)
    for session in sessions:
        coach = session.coach.get_full_name() or session.coach.get_username()
        for row in session_effect(session=session, today=today)[1]:
            by_criterion[row.criterion.title].append(row.effect.effect)
            by_coach[(coach, row.criterion.title)].append(row.effect.effect)

    def counted(effects: list[Difference]) -> int:
        return sum(1 for e in effects if e.ci is not None)

    rows = [SummaryRow(title, "", counted(e), mean_difference(e)) for title, e in sorted(by_criterion.items())]
    rows += [SummaryRow(title, coach, counted(e), mean_difference(e)) for (coach, title), e in sorted(by_coach.items())]
    return rows
