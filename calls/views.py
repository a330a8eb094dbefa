"""The calls list with its search and assignment, and the reviewers' throughput."""

from __future__ import annotations

import secrets

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from access import Capability, may, page_requires
from access.scope import scope_for
from core.errors import InvalidInputError
from qa.search import search_enabled
from calls.forms import AssignForm, CallFilterForm, PeriodForm
from calls.selectors import (
    SITTING_GAP,
    call_ids,
    call_page,
    call_sample,
    call_search,
    calls_visible,
    criterion_choices,
    reviewer_throughput,
    reviewers,
)
from calls.services import assignments_create
from reviews.selectors import rubric_choices

PAGE_SIZE = 50


@page_requires(Capability.READ_RECORDINGS)
@require_GET
def call_list(request: HttpRequest) -> HttpResponse:
    return _list(request, _filter_form(request), _assign_form(request))


@page_requires(Capability.ASSIGN)
@require_POST
def assign(request: HttpRequest) -> HttpResponse:
    """Assign the ticked calls, or a random sample of the search, to a supervisor; the search's filters
    come in the query string, as on the list, so the calls taken are those the lead found."""
    filter_form = _filter_form(request)
    form = _assign_form(request, data=request.POST)
    if not (filter_form.is_valid() and form.is_valid()):
        return _list(request, filter_form, form, status=400)
    # The calls of the workspaces where this lead may assign, to the people who review there.
    assigning = scope_for(request.user).where(Capability.ASSIGN)
    visible = calls_visible(request.user).filter(assigning.recordings_q())
    found = call_search(recordings=visible, filters=filter_form.filters(), user=request.user)
    data = form.cleaned_data
    if data["pick"] == AssignForm.SAMPLE:
        ids = call_sample(recordings=found, size=data["size"], seed=data["seed"])
    else:
        ids = call_ids(recordings=found, ids=data["call"])
    assignee = reviewers(assigning).filter(pk=int(data["assignee"])).first()
    if assignee is None:  # the form offered only these; someone else's id posted by hand
        form.add_error("assignee", _("Choose one of the supervisors listed."))
        return _list(request, filter_form, form, status=400)
    try:
        result = assignments_create(recording_ids=ids, assignee=assignee, assigned_by=request.user)
    except InvalidInputError as error:
        for field, message in error.errors.items():
            form.add_error(field, message)
        return _list(request, filter_form, form, status=400)
    text = ngettext(
        "%(count)d call assigned to %(user)s.", "%(count)d calls assigned to %(user)s.", result.assigned
    ) % {"count": result.assigned, "user": assignee.get_username()}
    if data["pick"] == AssignForm.SAMPLE:
        text += " " + _("A random sample of the calls found waiting for review, seed %(seed)d.") % {"seed": data["seed"]}
    if result.skipped:
        text += " " + ngettext(
            "%(count)d was not waiting for review and was left out.",
            "%(count)d were not waiting for review and were left out.",
            result.skipped,
        ) % {"count": result.skipped}
    messages.success(request, text)
    query = request.GET.urlencode()
    return redirect(reverse("calls:list") + (f"?{query}" if query else ""))


@page_requires(Capability.ASSIGN)
@require_GET
def throughput(request: HttpRequest) -> HttpResponse:
    form = PeriodForm(request.GET)
    if not form.is_valid():
        return render(request, "calls/reviewers.html", {"form": form, "rows": []}, status=400)
    rows = reviewer_throughput(scope=scope_for(request.user), date_from=form.cleaned_data["date_from"], date_to=form.cleaned_data["date_to"])
    context = {"form": form, "rows": rows, "sitting_minutes": int(SITTING_GAP.total_seconds() // 60)}
    return render(request, "calls/reviewers.html", context)


def _filter_form(request: HttpRequest) -> CallFilterForm:
    return CallFilterForm(
        request.GET,
        rubrics=rubric_choices(scope=scope_for(request.user)),
        criteria=criterion_choices(request.GET.get("rubric", ""), scope=scope_for(request.user)),
    )


def _assign_form(request: HttpRequest, data=None) -> AssignForm | None:
    if not may(request.user, Capability.ASSIGN):
        return None
    assignees = [(user.pk, user.get_username()) for user in reviewers(scope_for(request.user).where(Capability.ASSIGN))]
    # A fresh seed to start from, shown, so a sample can be drawn again.
    return AssignForm(data, assignees=assignees, initial={"seed": secrets.randbelow(1_000_000)})


def _list(request: HttpRequest, form: CallFilterForm, assign_form: AssignForm | None, status: int = 200) -> HttpResponse:
    context = {"form": form, "assign_form": assign_form, "full_text": search_enabled(), "page": None}
    if form.is_valid():
        filters = form.filters()
        found = call_search(recordings=calls_visible(request.user), filters=filters, user=request.user)
        context["page"] = call_page(recordings=found, filters=filters, number=request.GET.get("page", 1), size=PAGE_SIZE)
        context["filters"] = filters
    else:
        status = 400
    return render(request, "calls/list.html", context, status=status)
