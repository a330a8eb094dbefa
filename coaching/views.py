"""Coaching pages: the coach's (open a session from a scorecard cell or a reviewed call, one session with its
effect, the list of open and due sessions) and the agent's (their own sessions only: read, acknowledge,
comment). Thin: reads from coaching.selectors, writes through coaching.services."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access import Capability, page_requires
from access.scope import scope_for
from coaching.forms import CommentForm, SessionForm
from coaching.models import CoachingSession
from coaching.presentation import effect_rows, summary_rows
from coaching.selectors import (
    SUMMARY_SESSIONS,
    coaching_summary,
    coachable_scores,
    recording_for_coaching,
    rubric_for_coaching,
    session_effect,
    session_get,
    sessions_as_agent,
    sessions_list,
)
from coaching.services import coaching_acknowledge, coaching_close, coaching_comment_add, coaching_session_create
from core.errors import ConflictError, InvalidInputError
from qa.models import Recording
from rubrics.models import Rubric

coach_page = page_requires(Capability.COACH)
agent_page = page_requires(Capability.DISPUTE)
STATES = ("open", "due", "closed")
CANDIDATES = 20


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


@coach_page
@require_http_methods(["GET", "POST"])
def session_new(request: HttpRequest) -> HttpResponse:
    """?rubric=&agent=&criterion= (a scorecard cell) or ?recording= (a reviewed call)."""
    source = request.POST if request.method == "POST" else request.GET
    recording = None
    try:
        if _int(source.get("recording")):
            recording = recording_for_coaching(user=request.user, pk=_int(source.get("recording")))
            rubric, agent_id = recording.rubric, recording.agent_id
        else:
            rubric, agent_id = rubric_for_coaching(user=request.user, key=source.get("rubric") or 0), source.get("agent", "")
    except (Rubric.DoesNotExist, Recording.DoesNotExist):
        raise Http404(_("No such rubric or call to coach from.")) from None
    scope = scope_for(request.user)
    candidates = list(coachable_scores(rubric=rubric, agent_id=agent_id, scope=scope, viewer=request.user)[:CANDIDATES])
    if recording is not None and not any(s.run.recording_id == recording.pk for s in candidates):
        candidates += list(
            coachable_scores(rubric=rubric, agent_id=agent_id, scope=scope, viewer=request.user).filter(
                run__recording=recording
            )
        )
    choices = {}
    for score in candidates:
        choices.setdefault(score.run.recording_id, f"{score.run.recording.external_id} · {score.criterion.title} {score.value} · “{score.evidence[:120]}”")
    initial = {"criteria": [source.get("criterion")] if source.get("criterion") else [], "calls": [recording.pk] if recording else []}
    form = SessionForm(
        request.POST if request.method == "POST" else None, rubric=rubric, call_choices=list(choices.items()), initial=initial
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            session = coaching_session_create(
                user=request.user, rubric=rubric, agent_id=agent_id, criterion_keys=data["criteria"], goal=data["goal"],
                note=data["note"], follow_up_on=data["follow_up_on"], recording_ids=data["calls"] or None,
            )  # fmt: skip
        except InvalidInputError as error:
            form.add_service_errors(error.errors)
        except PermissionDenied as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("Coaching session opened; the agent is told."))
            return redirect("coaching:detail", pk=session.pk)
    return render(
        request,
        "coaching/new.html",
        {"form": form, "rubric": rubric, "agent_id": agent_id, "recording": recording},
        status=400 if request.method == "POST" else 200,
    )


@coach_page
@require_GET
def session_index(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state") or "open"
    if state not in STATES:
        state = "open"
    sessions = list(sessions_list(user=request.user, state=state)[:200])
    return render(
        request,
        "coaching/list.html",
        {
            "sessions": sessions, "state": state, "states": STATES, "today": timezone.localdate(),
            "summary": summary_rows(coaching_summary(user=request.user)), "summary_sessions": SUMMARY_SESSIONS,
        },
    )  # fmt: skip


def _detail(request: HttpRequest, session: CoachingSession, *, as_agent: bool, form: CommentForm | None = None) -> HttpResponse:
    periods, rows = session_effect(session=session)
    return render(
        request,
        "coaching/detail.html",
        {
            "session": session,
            "as_agent": as_agent,
            "periods": periods,
            "rows": effect_rows(rows, show_team=not as_agent),
            "form": form or CommentForm(),
            "today": timezone.localdate(),
        },
        status=400 if form is not None else 200,
    )


def _comment(request: HttpRequest, session: CoachingSession, *, as_agent: bool, back: str) -> HttpResponse:
    form = CommentForm(request.POST)
    if form.is_valid():
        try:
            coaching_comment_add(session=session, user=request.user, body=form.cleaned_data["body"])
        except InvalidInputError as error:
            form.add_error("body", str(error.errors.get("body", "")))
        except ConflictError as error:
            form.add_error(None, str(error))
        else:
            return redirect(back, pk=session.pk)
    return _detail(request, session, as_agent=as_agent, form=form)


@coach_page
@require_http_methods(["GET", "POST"])
def session_detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        session = session_get(user=request.user, pk=pk)
    except CoachingSession.DoesNotExist:
        raise Http404(_("No such coaching session.")) from None
    if request.method == "POST":
        return _comment(request, session, as_agent=False, back="coaching:detail")
    return _detail(request, session, as_agent=False)


@coach_page
@require_POST
def session_close(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        session = session_get(user=request.user, pk=pk)
    except CoachingSession.DoesNotExist:
        raise Http404(_("No such coaching session.")) from None
    coaching_close(session=session, user=request.user)
    messages.success(request, _("Session closed."))
    return redirect("coaching:detail", pk=pk)


def _own(request: HttpRequest, pk: int) -> CoachingSession:
    session = sessions_as_agent(user=request.user).filter(pk=pk).first()
    if session is None:
        raise Http404(_("No such coaching session."))
    return session_get(user=request.user, pk=pk)


@agent_page
@require_GET
def mine(request: HttpRequest) -> HttpResponse:
    sessions = list(sessions_as_agent(user=request.user).select_related("coach").prefetch_related("criteria__criterion"))
    return render(request, "coaching/mine.html", {"sessions": sessions})


@agent_page
@require_http_methods(["GET", "POST"])
def mine_detail(request: HttpRequest, pk: int) -> HttpResponse:
    session = _own(request, pk)
    if request.method == "POST":
        return _comment(request, session, as_agent=True, back="coaching:mine-detail")
    return _detail(request, session, as_agent=True)


@agent_page
@require_POST
def mine_acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    coaching_acknowledge(session=_own(request, pk), user=request.user)
    messages.success(request, _("Coaching session acknowledged."))
    return redirect("coaching:mine-detail", pk=pk)
