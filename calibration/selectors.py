"""Reads for calibration sessions, each in a fixed number of queries.

Blindness lives here: before a session closes, nothing returned to a
participant carries another participant's values or the judge's.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import date

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from access import Capability, may, signed_in
from access.scope import scope_for
from qa.filters import agent_q
from qa.models import JudgeRun, Recording, Score, judge_value_exists
from reviews.models import AgreedValue, CalibrationCall, CalibrationEntry, CalibrationSession, CalibrationValue
from reviews.figures.stats import RaterAgreement, quadratic_weighted_kappa, rater_agreement
from reviews.filters import days_q
from reviews.services import REVIEWABLE_STATUSES
from reviews.transcript import TurnView, transcript_turns
from rubrics.models import Criterion, Rubric

# Calls whose participants differ by this much or more are listed first, to be discussed.
DISCUSS_SPREAD = 2


def is_calibration_lead(user: AbstractBaseUser | AnonymousUser, workspace_id: int | None = None) -> bool:
    """Whether `user` runs calibrations: anywhere (the pages' buttons), or in `workspace_id` (a
    session's, a rubric's): a supervisor there who leads QA elsewhere does not."""
    if not may(user, Capability.RUN_CALIBRATION):
        return False
    return workspace_id is None or scope_for(user).may(Capability.RUN_CALIBRATION, workspace_id)


def sessions_visible(user: AbstractBaseUser | AnonymousUser) -> QuerySet[CalibrationSession]:
    """The sessions `user` may see: those of the workspaces where their role runs calibrations (the scope's
    one door, `visible_to`, narrowed to that capability), and those they take part in."""
    if not signed_in(user):
        return CalibrationSession.objects.none()
    led = CalibrationSession.objects.visible_to(scope_for(user).where(Capability.RUN_CALIBRATION)).values("pk")
    taking_part = CalibrationSession.objects.filter(participants=user).values("pk")
    return CalibrationSession.objects.filter(Q(pk__in=led) | Q(pk__in=taking_part))


def can_view_session(user: AbstractBaseUser | AnonymousUser, session: CalibrationSession) -> bool:
    return sessions_visible(user).filter(pk=session.pk).exists()


def sessions_for(user: AbstractBaseUser) -> QuerySet[CalibrationSession]:
    """The sessions of the workspaces where `user` leads calibrations, and those they take part in."""
    sessions = sessions_visible(user).select_related("rubric", "lead").prefetch_related("participants")
    return sessions.annotate(n_calls=Count("calls", distinct=True))


@dataclass(frozen=True)
class CallSelection:
    """Which judged calls of the rubric go into a session: the ids given, else a
    seeded random sample of `sample` from the calls matching the filters, else
    all of them."""

    recording_ids: tuple[int, ...] = ()
    sample: int | None = None
    seed: int | None = None
    team: str = ""
    agent: str = ""
    date_from: date | None = None
    date_to: date | None = None

    def as_record(self) -> dict:
        """For the session's `selection`, so the draw can be repeated."""
        return {
            key: value.isoformat() if isinstance(value, date) else (list(value) if isinstance(value, tuple) else value)
            for key, value in asdict(self).items()
            if value not in ((), None, "")
        }


def calibration_pool(rubric: Rubric, selection: CallSelection | None = None) -> QuerySet[Recording]:
    """The calls a session on this rubric version may take: judged with it, matching the filters."""
    recordings = Recording.objects.filter(
        rubric=rubric,
        status__in=REVIEWABLE_STATUSES,
        current_run__isnull=False,
        current_run__status=JudgeRun.Status.SUCCEEDED,
    )
    if selection is None:
        return recordings
    if selection.team:
        recordings = recordings.filter(team=selection.team)
    return recordings.filter(agent_q(selection.agent), days_q(selection.date_from, selection.date_to))


def calibration_calls_named(rubric: Rubric, names: list[str]) -> tuple[tuple[int, ...], list[str]]:
    """The calls of the rubric version's pool that `names` names, in their order, and the names that name
    none. A name is a call's own id (`external_id`, what the queue, the calls list and the API show) or
    its internal number (what the URLs show); an external id that several sources share names each call."""
    pool = calibration_pool(rubric)
    by_external: defaultdict[str, list[int]] = defaultdict(list)
    for external_id, pk in pool.filter(external_id__in=names).order_by("pk").values_list("external_id", "pk"):
        by_external[external_id].append(pk)
    numbers = [int(name) for name in names if name.isdigit() and name not in by_external]
    internal = set(pool.filter(pk__in=numbers).values_list("pk", flat=True))
    found: list[int] = []
    unknown: list[str] = []
    for name in names:
        if name in by_external:
            found.extend(by_external[name])
        elif name.isdigit() and int(name) in internal:
            found.append(int(name))
        else:
            unknown.append(name)
    return tuple(dict.fromkeys(found)), unknown


def calibration_pool_of_earlier_versions(rubric: Rubric, selection: CallSelection | None = None) -> int:
    """How many calls matching the selection were judged with an earlier version of the rubric: why a new
    version's pool can be empty."""
    earlier = Rubric.objects.filter(slug=rubric.slug, version__lt=rubric.version)
    return sum(calibration_pool(version, selection).count() for version in earlier)


def session_get(*, pk: int, user: AbstractBaseUser) -> CalibrationSession:
    """The session, 404 for someone who neither leads calibrations nor takes part in it."""
    return get_object_or_404(sessions_visible(user).select_related("rubric", "lead"), pk=pk)


@dataclass(frozen=True)
class CallProgress:
    call: CalibrationCall
    scored_by_user: bool


@dataclass(frozen=True)
class SessionOverview:
    session: CalibrationSession
    participants: list[AbstractBaseUser]
    calls: list[CallProgress]
    entries_by_participant: dict[int, int]  # participant id -> calls scored (a count, never values)
    is_participant: bool


def session_overview(*, session: CalibrationSession, user: AbstractBaseUser) -> SessionOverview:
    calls = list(session.calls.select_related("recording").defer("recording__transcript", "recording__turns"))
    counts = dict(
        CalibrationEntry.objects.filter(call__session=session)
        .values_list("participant_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    mine = set(
        CalibrationEntry.objects.filter(call__session=session, participant=user).values_list("call_id", flat=True)
    )
    participants = list(session.participants.order_by("username"))
    is_participant = any(participant.pk == user.pk for participant in participants)
    # While the session is open a participant sees their own progress only: the others' counts tell
    # who has scored what, and per criterion, who marked it N/A.
    shown = [user] if sees_own_progress_only(session=session, user=user, is_participant=is_participant) else participants
    return SessionOverview(
        session=session,
        participants=shown,
        calls=[CallProgress(call, call.pk in mine) for call in calls],
        entries_by_participant={person.pk: counts.get(person.pk, 0) for person in shown},
        is_participant=is_participant,
    )


def session_own_progress(*, session: CalibrationSession, user: AbstractBaseUser) -> dict[str, int]:
    return {
        "scored": CalibrationEntry.objects.filter(call__session=session, participant=user).count(),
        "calls": session.calls.count(),
    }


def sees_own_progress_only(*, session: CalibrationSession, user: AbstractBaseUser, is_participant: bool | None = None) -> bool:
    """A participant of an open session (a lead who takes part too): they see nothing of the others."""
    if not session.is_open:
        return False
    if is_participant is None:
        is_participant = session.participants.filter(pk=user.pk).exists()
    return is_participant


@dataclass(frozen=True)
class ScoringPage:
    """What a participant sees to score a call: the transcript and the rubric, no marks,
    no judge, no peers; only their own entry, if they made one."""

    session: CalibrationSession
    call: CalibrationCall
    criteria: list[Criterion]
    turns: list[TurnView]
    own: dict[str, CalibrationValue]  # criterion key -> the participant's own value
    own_comment: str
    position: int  # 1-based place of the call in the session
    total: int
    next_call: CalibrationCall | None

    # What the review page's player (templates/review/_player.html) reads: the call, and blind, so no quote plays.
    blind = True

    @property
    def recording(self) -> Recording:
        return self.call.recording


def scoring_page(*, session: CalibrationSession, recording_id: int, user: AbstractBaseUser) -> ScoringPage:
    calls = list(session.calls.only("pk", "recording_id", "session_id"))
    index = next((i for i, call in enumerate(calls) if call.recording_id == recording_id), None)
    if index is None:
        raise Http404
    call = session.calls.select_related("recording").get(pk=calls[index].pk)
    entry = CalibrationEntry.objects.filter(call=call, participant=user).prefetch_related("values__criterion").first()
    recording = call.recording
    return ScoringPage(
        session=session,
        call=call,
        criteria=list(session.rubric.criteria.prefetch_related("exceptions")),
        # No evidence spans: the marks are the judge's quotes, and would anchor the participant.
        turns=transcript_turns(recording.transcript, {}, recording.turns),
        own={value.criterion.key: value for value in entry.values.all()} if entry else {},
        own_comment=entry.comment if entry else "",
        position=index + 1,
        total=len(calls),
        next_call=calls[index + 1] if index + 1 < len(calls) else None,
    )


@dataclass(frozen=True)
class HumanValue:
    value: int | None
    not_applicable: bool = False


@dataclass(frozen=True)
class CallRow:
    call: CalibrationCall
    values: list[HumanValue | None]  # one per participant, in the session's participant order; None: not scored
    judge: HumanValue | None  # the judge's value (not_applicable: the judge said N/A); None: no score
    spread: int | None  # max − min of the participants' numbers; None with fewer than two
    agreed: AgreedValue | None
    # False where the judge's quote did not verify: its value does not exist (docs/dev/design.md), so the
    # page shows the unverified mark in its place and the judge-against-agreed figures leave it out.
    judge_verified: bool = True

    @property
    def to_discuss(self) -> bool:
        return self.spread is not None and self.spread >= DISCUSS_SPREAD


@dataclass(frozen=True)
class CriterionResults:
    criterion: Criterion
    agreement: RaterAgreement  # bias keyed by participant id
    rows: list[CallRow]  # calls to discuss first
    judge_vs_agreed_n: int
    judge_vs_agreed_qwk: float | None
    judge_vs_agreed_mae: float | None


@dataclass(frozen=True)
class SessionResults:
    session: CalibrationSession
    participants: list[AbstractBaseUser]
    criteria: list[CriterionResults]
    comments: dict[int, list[tuple[str, str]]]  # call id -> (participant, comment)


def session_results(*, session: CalibrationSession) -> SessionResults:
    """Everyone's values beside the judge's and the agreed ones, with the agreement figures,
    in seven queries. Only call it for a closed session, or for a QA lead's own CSV of it."""
    participants = list(session.participants.order_by("username"))
    criteria = list(session.rubric.criteria.all())
    calls = list(session.calls.select_related("recording").defer("recording__transcript", "recording__turns"))
    values: defaultdict[tuple[int, int], dict[int, HumanValue]] = defaultdict(dict)  # (call, criterion) -> by user
    for call_id, participant_id, criterion_id, value, not_applicable in CalibrationValue.objects.filter(
        entry__call__session=session
    ).values_list("entry__call_id", "entry__participant_id", "criterion_id", "value", "not_applicable"):
        values[(call_id, criterion_id)][participant_id] = HumanValue(value, not_applicable)
    judge = {}
    judge_verified = {}
    for run_id, criterion_id, value, evidence_verified in Score.objects.filter(
        run_id__in={call.run_id for call in calls}
    ).values_list("run_id", "criterion_id", "value", "evidence_verified"):
        judge[(run_id, criterion_id)] = HumanValue(value, value is None)
        judge_verified[(run_id, criterion_id)] = judge_value_exists(evidence_verified=evidence_verified)
    agreed = {(a.call_id, a.criterion_id): a for a in AgreedValue.objects.filter(call__session=session)}
    comments: defaultdict[int, list[tuple[str, str]]] = defaultdict(list)
    for call_id, username, comment in (
        CalibrationEntry.objects.filter(call__session=session)
        .exclude(comment="")
        .order_by("participant__username")
        .values_list("call_id", "participant__username", "comment")
    ):
        comments[call_id].append((username, comment))

    results = []
    for criterion in criteria:
        rows = []
        numbers: dict[int, dict[int, int]] = {}
        for call in calls:
            given = values.get((call.pk, criterion.pk), {})
            found = {pk: found.value for pk, found in given.items() if found.value is not None}
            numbers[call.pk] = found
            rows.append(
                CallRow(
                    call=call,
                    values=[given.get(participant.pk) for participant in participants],
                    judge=judge.get((call.run_id, criterion.pk)),
                    spread=max(found.values()) - min(found.values()) if len(found) >= 2 else None,
                    agreed=agreed.get((call.pk, criterion.pk)),
                    judge_verified=judge_verified.get((call.run_id, criterion.pk), True),
                )
            )
        rows.sort(key=lambda row: (not row.to_discuss, -(row.spread or 0), row.call.pk))
        compared = [
            (row.judge.value, row.agreed.value)
            for row in rows
            if row.judge and row.judge_verified and row.judge.value is not None
            and row.agreed and row.agreed.value is not None
        ]
        results.append(
            CriterionResults(
                criterion=criterion,
                agreement=rater_agreement(numbers),
                rows=rows,
                judge_vs_agreed_n=len(compared),
                judge_vs_agreed_qwk=quadratic_weighted_kappa(Counter(compared)),
                judge_vs_agreed_mae=sum(abs(a - b) for a, b in compared) / len(compared) if compared else None,
            )
        )
    return SessionResults(session=session, participants=participants, criteria=results, comments=dict(comments))


@dataclass(frozen=True)
class CriterionSummary:
    """A criterion's figures for the API. Before the session closes only the counts are
    given: any figure would tell a participant something about the others' values."""

    criterion_key: str
    n_recordings: int  # calls with values from two or more participants
    n_raters: int
    exact_agreement: float | None = None
    within_one: float | None = None
    mean_pairwise_qwk: float | None = None
    alpha: float | None = None
    judge_vs_agreed_qwk: float | None = None
    judge_vs_agreed_mae: float | None = None


def session_summary(*, session: CalibrationSession) -> list[CriterionSummary]:
    summaries = []
    for result in session_results(session=session).criteria:
        counts = {
            "criterion_key": result.criterion.key,
            "n_recordings": result.agreement.n_units,
            "n_raters": result.agreement.n_raters,
        }
        if session.is_open:
            summaries.append(CriterionSummary(**counts))
            continue
        summaries.append(
            CriterionSummary(
                **counts,
                exact_agreement=result.agreement.exact_agreement,
                within_one=result.agreement.within_one,
                mean_pairwise_qwk=result.agreement.mean_pairwise_qwk,
                alpha=result.agreement.alpha,
                judge_vs_agreed_qwk=result.judge_vs_agreed_qwk,
                judge_vs_agreed_mae=result.judge_vs_agreed_mae,
            )
        )
    return summaries
