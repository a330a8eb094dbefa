"""An agent's pages: their calls, one call with its review (acknowledge, dispute), their scorecard.
Each reads the agent's own calls only (insights.agents.selectors.agent_recordings): another agent's call
is not found."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access import Capability, page_requires
from access.scope import scope_for
from core.errors import ConflictError, InvalidInputError
from reviews.selectors import agent_ids, agent_recordings
from disputes.forms import AcknowledgeForm, DisputeForm
from disputes.selectors import CallView, agent_calls, call_view
from disputes.services import dispute_open, dispute_outcome_seen, review_acknowledge
from reviews.figures.charts import Series, line_chart
from reviews.figures.formatting import number
from insights.scorecards.forms import ScorecardFilterForm
from insights.scorecards.selectors import OVERALL, agent_card
from insights.scorecards.cells import CellWords, cell_view, why_figures_are_missing
from insights.selfreview.forms import SelfReviewForm
from insights.selfreview.selectors import calls_still_blind, own_agreement, self_review_lines, self_review_of, self_review_offered
from insights.selfreview.services import self_review_skip, self_review_submit
from insights.scorecards.freshness import rollups_as_of
from reviews.transcript import transcript_turns

agent_page = page_requires(Capability.DISPUTE)


def _own_call(request: HttpRequest, pk: int):
    return get_object_or_404(agent_recordings(request.user).filter(current_run__isnull=False), pk=pk)


@agent_page
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    calls = agent_calls(user=request.user)
    return render(request, "agents/home.html", {"calls": calls, "agent_ids": agent_ids(request.user)})


@agent_page
@require_GET
def call(request: HttpRequest, pk: int) -> HttpResponse:
    recording = _own_call(request, pk)
    if self_review_offered(recording=recording, user=request.user):
        return _render_blind(request, recording, _self_review_form(recording))
    view = call_view(recording=recording, user=request.user)
    if view.dispute is not None:
        dispute_outcome_seen(dispute=view.dispute, user=request.user)
    return _render_call(request, view, DisputeForm(lines=view.lines), AcknowledgeForm())


def _self_review_form(recording, data=None) -> SelfReviewForm:
    criteria = list(recording.rubric.criteria.prefetch_related("exceptions").order_by("order", "pk"))
    return SelfReviewForm(data, criteria=criteria)


def _render_blind(request: HttpRequest, recording, form: SelfReviewForm, status: int = 200) -> HttpResponse:
    """The call before the agent has seen its values: the transcript without the judge's quotes marked, and the
    self-review form; no value, quote, rationale, quality score or comment of the judge's or a supervisor's."""
    turns = transcript_turns(recording.transcript, {}, recording.turns)
    return render(request, "agents/self_review.html", {"recording": recording, "turns": turns, "form": form}, status=status)


def _render_call(
    request: HttpRequest, view: CallView, form: DisputeForm, acknowledge: AcknowledgeForm, status: int = 200
) -> HttpResponse:
    own = self_review_of(recording=view.page.recording, user=request.user)
    lines = self_review_lines(self_review=own, view=view) if own is not None and not own.skipped else []
    return render(
        request,
        "agents/call.html",
        {"view": view, "page": view.page, "form": form, "acknowledge": acknowledge, "self_lines": lines},
        status=status,
    )


@agent_page
@require_POST
def self_review(request: HttpRequest, pk: int) -> HttpResponse:
    recording = _own_call(request, pk)
    form = _self_review_form(recording, request.POST)
    if form.is_valid():
        try:
            self_review_submit(recording=recording, user=request.user, values=form.values())
        except InvalidInputError as error:
            form.add_service_errors(error.errors)
        except ConflictError as error:
            messages.error(request, str(error))
            return redirect("agents:call", pk=pk)
        else:
            messages.success(request, _("Your scores are saved: here they are beside the judge's and the supervisor's."))
            return redirect(f"{reverse('agents:call', args=[pk])}#self-review")
    return _render_blind(request, recording, form, status=400)


@agent_page
@require_POST
def self_review_skip_view(request: HttpRequest, pk: int) -> HttpResponse:
    self_review_skip(recording=_own_call(request, pk), user=request.user)
    return redirect("agents:call", pk=pk)


@agent_page
@require_POST
def acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    view = call_view(recording=_own_call(request, pk), user=request.user)
    form = AcknowledgeForm(request.POST)
    if view.review is None or not form.is_valid():
        raise Http404(_("This call has no final review to acknowledge."))
    review_acknowledge(review=view.review, user=request.user, comment=form.cleaned_data["comment"])
    messages.success(request, _("Review acknowledged."))
    return redirect("agents:call", pk=pk)


@agent_page
@require_http_methods(["POST"])
def dispute(request: HttpRequest, pk: int) -> HttpResponse:
    view = call_view(recording=_own_call(request, pk), user=request.user)
    form = DisputeForm(request.POST, lines=view.lines)
    if view.review is None:
        raise Http404(_("This call has no final review to dispute."))
    if form.is_valid():
        try:
            dispute_open(review=view.review, user=request.user, criteria=form.values())
        except InvalidInputError as error:
            form.add_service_errors(error.errors)
        except (ConflictError, PermissionDenied) as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("Your dispute was sent to a QA lead."))
            return redirect("agents:call", pk=pk)
    return _render_call(request, view, form, AcknowledgeForm(), status=400)


@agent_page
@require_GET
def scorecard(request: HttpRequest) -> HttpResponse:
    """The supervisors' agent scorecard (the same estimator), for the agent alone: no team's row and no
    other agent's calls; the calls to coach with are their own, linked to their call pages."""
    own = agent_recordings(request.user).filter(current_run__isnull=False)
    query = request.GET
    if "rubric" not in query:
        latest = own.select_related("rubric").order_by("-occurred_at", "-id").first()
        if latest is None:
            # No judged call of theirs (a superuser holds this page's permission too): a sentence, not the
            # filter form's "This field is required." for a rubric nothing could have chosen.
            form = ScorecardFilterForm(scope=scope_for(request.user))
            return render(request, "agents/scorecard.html", {"form": form, "cards": [], "no_calls": True})
        query = query.copy()
        query["rubric"], query["version"] = latest.rubric.slug, str(latest.rubric.version)
    form = ScorecardFilterForm(query, scope=scope_for(request.user))
    cards = []
    as_of = None
    if form.is_valid():
        filters = form.filters()
        words = CellWords.current()
        for agent_id in agent_ids(request.user):
            card = agent_card(filters, agent_id, viewer=request.user)
            if card is not None:
                # A call whose values the agent has not seen yet is listed without them: its page offers the
                # self-review first.
                ids = [call.recording_id for item in card.criteria for call in item.coaching]
                blind = calls_still_blind(user=request.user, recording_ids=ids)
                criteria = [_criterion(item, card, words, blind) for item in card.criteria]
                cards.append({"card": card, "criteria": criteria})
        as_of = rollups_as_of(rubric=filters.rubric)
    context = {"form": form, "cards": cards, "self_agreement": own_agreement(user=request.user), "as_of": as_of}
    return render(request, "agents/scorecard.html", context)


def _criterion(item, card, words: CellWords, blind: set[int]) -> dict:
    places = 1 if item.column.key == OVERALL else 2
    label = card.agent_name or card.agent_id
    return {
        "column": item.column,
        "agent": cell_view(item.agent, item.column, words),
        "judge_mean": number(item.agent.judge_mean, places),
        "human_mean": number(item.agent.human_audit_mean, places),
        "why": why_figures_are_missing(item.agent),
        "chart": line_chart(
            [point.week.isoformat() for point in item.weeks],
            [Series(label, [point.agent.estimate for point in item.weeks])],
            title=_("%(criterion)s per week") % {"criterion": item.column.title},
            fmt=lambda value: number(value, places),
        ),
        "coaching": [(call, call.recording_id in blind) for call in item.coaching],
        "unverified": item.unverified,
    }
