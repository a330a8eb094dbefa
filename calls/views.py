"""The calls list with its search and assignment, and the reviewers' throughput."""

from __future__ import annotations

import secrets
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from access import Capability, may, page_requires
from access.scope import scope_for
from core.errors import InvalidInputError
from qa.search import search_enabled
from calls.forms import AssignForm, CallFilterForm, PeriodForm, QueueBulkForm, SavedSearchForm
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
    saved_searches,
)
from calls.services import assignments_create, saved_search_delete, saved_search_save
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
@require_POST
def queue_bulk(request: HttpRequest) -> HttpResponse:
    """The review queue's bulk actions on the calls ticked there: assign them to a supervisor (the same
    service and rule as the calls list's Assign), or open a new calibration session's form with them chosen.
    The queue's own query string comes along, so the lead goes back to the queue as they left it."""
    back = reverse("review-queue") + (f"?{request.GET.urlencode()}" if request.GET else "")
    assigning = scope_for(request.user).where(Capability.ASSIGN)
    assignees = reviewers(assigning)
    form = QueueBulkForm(request.POST, assignees=[(user.pk, user.get_username()) for user in assignees])
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect(back)
    data = form.cleaned_data
    # Only the calls of the workspaces where this lead may assign, whatever ids were posted.
    ticked = calls_visible(request.user).filter(assigning.recordings_q(), pk__in=data["call"])
    if data["action"] == QueueBulkForm.CALIBRATE:
        return _to_calibration(request, ticked, back)
    assignee = assignees.get(pk=int(data["assignee"]))
    try:
        result = assignments_create(recording_ids=list(ticked.values_list("pk", flat=True)), assignee=assignee, assigned_by=request.user)
    except InvalidInputError as error:
        for message in error.errors.values():
            messages.error(request, message)
        return redirect(back)
    text = ngettext(
        "%(count)d call assigned to %(user)s.", "%(count)d calls assigned to %(user)s.", result.assigned
    ) % {"count": result.assigned, "user": assignee.get_username()}
    left_out = len(data["call"]) - result.assigned
    if left_out:
        text += " " + ngettext(
            "%(count)d was not waiting for review and was left out.",
            "%(count)d were not waiting for review and were left out.",
            left_out,
        ) % {"count": left_out}
    messages.success(request, text)
    return redirect(back)


def _to_calibration(request: HttpRequest, ticked, back: str) -> HttpResponse:
    """A session calibrates one rubric: the calls ticked, if of one, open the new session's form chosen by id."""
    if not may(request.user, Capability.RUN_CALIBRATION):
        messages.error(request, _("Only a QA lead runs calibration sessions."))
        return redirect(back)
    calls = list(ticked.order_by("pk").values_list("pk", "rubric__slug"))
    slugs = sorted({slug for _pk, slug in calls})
    if len(slugs) != 1:
        messages.error(
            request,
            _("A calibration session takes the calls of one rubric; the calls ticked are of %(rubrics)s: tick calls of one.")
            % {"rubrics": ", ".join(slugs)}
            if slugs
            else _("None of the calls ticked can be sent."),
        )
        return redirect(back)
    messages.info(
        request,
        ngettext(
            "%(count)d call from the queue is chosen: name the session and choose its participants.",
            "%(count)d calls from the queue are chosen: name the session and choose their participants.",
            len(calls),
        )
        % {"count": len(calls)},
    )
    query = urlencode({"choose": "ids", "rubric": slugs[0], "recording_ids": " ".join(str(pk) for pk, _slug in calls)})
    return redirect(reverse("calibration-create") + f"?{query}")


@page_requires(Capability.READ_RECORDINGS)
@require_POST
def saved_search_create(request: HttpRequest) -> HttpResponse:
    """Keep the list's search (its filters and words, in the query string as on the list) under a name."""
    filter_form = _filter_form(request)
    form = SavedSearchForm(request.POST)
    if not (filter_form.is_valid() and form.is_valid()):
        return _list(request, filter_form, _assign_form(request), status=400, save_form=form)
    try:
        search, created = saved_search_save(user=request.user, name=form.cleaned_data["name"], query=filter_form.query())
    except InvalidInputError as error:
        for field, message in error.errors.items():
            form.add_error(field if field in form.fields else None, message)
        return _list(request, filter_form, _assign_form(request), status=400, save_form=form)
    if created:
        messages.success(request, _("Search saved as “%(name)s”.") % {"name": search.name})
    else:
        messages.success(request, _("“%(name)s” now keeps this search.") % {"name": search.name})
    return redirect(reverse("calls:list") + (f"?{search.query}" if search.query else ""))


@page_requires(Capability.READ_RECORDINGS)
@require_POST
def saved_search_remove(request: HttpRequest, pk: int) -> HttpResponse:
    search = saved_search_delete(user=request.user, saved_search_id=pk)
    if search is None:
        raise Http404(_("You have no saved search with this number."))
    messages.success(request, _("Saved search “%(name)s” deleted.") % {"name": search.name})
    return redirect("calls:list")


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


def _list(
    request: HttpRequest,
    form: CallFilterForm,
    assign_form: AssignForm | None,
    status: int = 200,
    save_form: SavedSearchForm | None = None,
) -> HttpResponse:
    context = {
        "form": form,
        "assign_form": assign_form,
        "full_text": search_enabled(),
        "page": None,
        "saved_searches": saved_searches(user=request.user),
        "save_form": save_form or SavedSearchForm(),
    }
    if form.is_valid():
        filters = form.filters()
        found = call_search(recordings=calls_visible(request.user), filters=filters, user=request.user)
        context["page"] = call_page(recordings=found, filters=filters, number=request.GET.get("page", 1), size=PAGE_SIZE)
        context["filters"] = filters
    else:
        status = 400
    return render(request, "calls/list.html", context, status=status)
