"""An agent's pages: their calls, one call with its review (acknowledge, dispute), their scorecard.
Each reads the agent's own calls only (insights.agents.selectors.agent_recordings): another agent's call
is not found."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
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
    view = call_view(recording=_own_call(request, pk), user=request.user)
    if view.dispute is not None:
        dispute_outcome_seen(dispute=view.dispute, user=request.user)
    return _render_call(request, view, DisputeForm(lines=view.lines), AcknowledgeForm())


def _render_call(
    request: HttpRequest, view: CallView, form: DisputeForm, acknowledge: AcknowledgeForm, status: int = 200
) -> HttpResponse:
    return render(
        request,
        "agents/call.html",
        {"view": view, "page": view.page, "form": form, "acknowledge": acknowledge},
        status=status,
    )


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
    if form.is_valid():
        filters = form.filters()
        words = CellWords.current()
        for agent_id in agent_ids(request.user):
            card = agent_card(filters, agent_id, viewer=request.user)
            if card is not None:
                cards.append({"card": card, "criteria": [_criterion(item, card, words) for item in card.criteria]})
    return render(request, "agents/scorecard.html", {"form": form, "cards": cards})


def _criterion(item, card, words: CellWords) -> dict:
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
        "coaching": item.coaching,
        "unverified": item.unverified,
    }
