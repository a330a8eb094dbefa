"""The supervisors' review queue and review page."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access import Capability, SIGNED_IN, may, page_requires
from access.scope import scope_for
from core.errors import ConflictError, InvalidInputError
from qa.models import Recording
from reviews.claims import claim_holder, claim_release, claim_take
from reviews.forms import QueueFilterForm, ReviewForm
from reviews.models import Review
from reviews.selectors import (
    QueuePosition,
    ReviewPage,
    queue_assigned,
    queue_being_judged_count,
    queue_next,
    queue_page,
    queue_reason_counts,
    queue_team_choices,
    review_page,
    reviewers,
    rubric_choices,
)
from reviews.services import UNDO_SECONDS, UNDO_SESSION_KEY, review_create, review_void
from rubrics.quality import quality_score
from rubrics.selectors import rubric_quality_policy

QUEUE_PAGE_SIZE = 50
# Where the supervisor goes after a review: the next call in the queue, or back to the queue.
AFTER_SUBMIT_SESSION_KEY = "review_after_submit"
# The review just submitted, which the next page offers to undo (templatetags/review_tags.py: undo_toast).


@page_requires(SIGNED_IN)
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Where `/` and a login land: the dashboard for those who read reports (QA leads, supervisors), the queue
    for those who only review, else the first page this user may open, so a rubric owner is not greeted by
    a 403."""
    if may(request.user, Capability.READ_REPORTS):
        return redirect("dashboard")
    if may(request.user, Capability.REVIEW):
        return redirect("review-queue")
    if may(request.user, Capability.DISPUTE):  # an agent: their own calls
        return redirect("agents:home")
    if request.user.is_staff:
        return redirect("admin:index")
    raise PermissionDenied


# Anonymous users go to the login page; signed-in users who may not review get a 403.
supervisor_required = page_requires(Capability.REVIEW)


@supervisor_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    form = _filter_form(request)
    filters = form.filters()
    scope = scope_for(request.user)
    page = queue_page(
        filters=filters,
        scope=scope,
        size=QUEUE_PAGE_SIZE,
        after=QueuePosition.parse(request.GET.get("after")),
        before=QueuePosition.parse(request.GET.get("before")),
    )
    counts = queue_reason_counts(filters=filters, scope=scope)
    reasons = [(value, label, counts[value]) for value, label in Recording.ReviewReason.choices]
    # The calls a lead assigned to this supervisor come first: above the queue's first page.
    first_page = page.previous is None
    assigned = list(queue_assigned(filters=filters, user=request.user)) if first_page else []
    context = {"form": form, "page": page, "reasons": reasons, "assigned": assigned,
               "being_judged": queue_being_judged_count(scope=scope)}  # fmt: skip
    if may(request.user, Capability.ASSIGN):
        # Bulk actions on the calls ticked (calls.views.queue_bulk): whom they can go to, and whether to a session.
        context["assignees"] = reviewers(scope.where(Capability.ASSIGN))
        context["can_calibrate"] = may(request.user, Capability.RUN_CALIBRATION)
    return render(request, "review/queue.html", context)


@supervisor_required
@require_http_methods(["GET", "POST"])
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    page = review_page(recording_id=pk, user=request.user)
    recording = page.recording
    # Opening a queued call claims it; one already reviewed by this user is
    # only being looked at (e.g. the reveal after a blind audit) and must not
    # block the next supervisor. Submitting always needs the claim.
    opening_for_review = recording.status == Recording.Status.IN_REVIEW and not page.reviewed_by_user
    wants_claim = request.method == "POST" or opening_for_review
    claim = claim_take(recording=recording, user=request.user) if wants_claim else None
    holder = claim or claim_holder(recording=recording)
    locked = holder is not None and holder.user_id != request.user.pk

    # A call with a final review is read-only until the supervisor asks for a new review (?new=1),
    # so a stray key or click on a finished call never supersedes it.
    starting_new = request.GET.get("new") == "1"
    read_only = page.final_review is not None and not starting_new
    form = ReviewForm(
        request.POST or None,
        criteria=page.criteria,
        blind=page.blind,
        initial={"then": request.session.get(AFTER_SUBMIT_SESSION_KEY, "next")},
    )
    if request.method == "POST" and form.is_valid():
        if locked:
            message = _("%(user)s is reviewing this call; your review was not saved.") % {"user": holder.user}
            form.add_error(None, message)
        elif read_only:
            form.add_error(None, _("This call already has a final review; start a new review to replace it."))
        elif (review := _submit(request, page, form, replace_final=starting_new)) is not None:
            request.session[AFTER_SUBMIT_SESSION_KEY] = form.cleaned_data["then"] or "next"
            return _after_submit(request, page, review)
    context = {
        "page": page,
        "form": form,
        "rows": form.rows(),
        "errors": form.error_summary() if form.is_bound else [],
        "claim": holder,
        "locked": locked,
        "read_only": read_only,
        "starting_new": starting_new,
        **_quality_context(page, form),
    }
    return render(request, "review/detail.html", context)


def _quality_context(page: ReviewPage, form: ReviewForm) -> dict:
    """The call's quality score by the values chosen so far, and the policy the page's script recomputes
    it with as they change (static/review/quality.js): the same arithmetic (rubrics.quality)."""
    policy = rubric_quality_policy(page.run.rubric)
    titles = {view.criterion.key: view.criterion.title for view in page.criteria}
    quality = quality_score(policy, form.chosen_values())
    return {
        "quality": quality,
        "quality_titles": [titles.get(key, key) for key in quality.auto_fail_criteria],
        "quality_policy": {"policy": policy.as_dict(), "titles": titles},
    }


@supervisor_required
@require_POST
def release(request: HttpRequest, pk: int) -> HttpResponse:
    recording = get_object_or_404(Recording.objects.filter(scope_for(request.user).recordings_q()), pk=pk)
    if claim_release(recording=recording, user=request.user):
        messages.info(request, _("You released the call; another supervisor can take it."))
    return _to_queue(request)


@supervisor_required
@require_POST
def next_item(request: HttpRequest) -> HttpResponse:
    """Leave the current call (if any) and open the next one in queue order."""
    after_id = request.POST.get("after", "")
    visible = Recording.objects.filter(scope_for(request.user).recordings_q())
    after = visible.filter(pk=int(after_id)).first() if after_id.isdigit() else None
    if after is not None:
        claim_release(recording=after, user=request.user)
    following = queue_next(after=after, filters=_filter_form(request).filters(), user=request.user)
    if following is None:
        messages.info(request, _("No more calls are waiting for review."))
        return _to_queue(request)
    return _keeping_filters(request, reverse("review-detail", args=[following.pk]))


def _submit(request: HttpRequest, page: ReviewPage, form: ReviewForm, *, replace_final: bool) -> Review | None:
    """Save the review through the service; on refusal put its messages on the form and return None.
    The service decides the claim, the final-review lock and who may review: the checks above only
    say it sooner, and a race between them and the service ends here."""
    adjustments = form.adjustments()
    try:
        return review_create(
            recording=page.recording,
            decision=form.cleaned_data["decision"],
            reviewer=request.user.get_username(),
            user=request.user,
            adjusted_mean=form.cleaned_data["adjusted_mean"],
            comment=form.cleaned_data["comment"],
            criteria=adjustments,
            blind=page.blind,
            reject_reason=form.cleaned_data["reject_reason"],
            replace_final=replace_final,
        )
    except InvalidInputError as error:
        form.add_service_errors(error.errors, adjustments)
    except ConflictError as error:  # not judged, claimed by someone else, or a final review already there
        form.add_error(None, str(error))
    return None


@supervisor_required
@require_POST
def undo(request: HttpRequest, pk: int) -> HttpResponse:
    """The toast's Undo: void the review just submitted and go back to its call, claimed again."""
    review = get_object_or_404(Review, pk=pk)
    request.session.pop(UNDO_SESSION_KEY, None)
    try:
        recording = review_void(review=review, user=request.user)
    except ConflictError as error:
        messages.error(request, str(error))
        return _to_queue(request)
    messages.info(request, _("Review undone: %(recording)s is as it was before it.") % {"recording": recording.external_id})
    return _keeping_filters(request, reverse("review-detail", args=[recording.pk]))


def _after_submit(request: HttpRequest, page: ReviewPage, review: Review) -> HttpResponse:
    if page.blind:
        # Back to the same page, now revealed: the reviewer compares their values with the model's.
        messages.success(request, _("Blind audit saved. The model's scores are now shown next to yours."))
        return _keeping_filters(request, reverse("review-detail", args=[page.recording.pk]))
    saved = {"decision": review.get_decision_display(), "recording": page.recording.external_id}
    messages.success(request, _("Review saved: %(decision)s, %(recording)s.") % saved)
    # Stored already; the next page offers Undo for UNDO_SECONDS instead of the submit waiting for it.
    request.session[UNDO_SESSION_KEY] = {"review": review.pk, "until": review.created_at.timestamp() + UNDO_SECONDS}
    if request.session.get(AFTER_SUBMIT_SESSION_KEY) == "queue":
        return _to_queue(request)
    following = queue_next(after=page.recording, filters=_filter_form(request).filters(), user=request.user)
    if following is None:
        messages.info(request, _("No more calls are waiting for review."))
        return _to_queue(request)
    return _keeping_filters(request, reverse("review-detail", args=[following.pk]))


def _filter_form(request: HttpRequest) -> QueueFilterForm:
    scope = scope_for(request.user)
    return QueueFilterForm(request.GET, rubrics=rubric_choices(scope=scope), teams=queue_team_choices(scope=scope))


def _to_queue(request: HttpRequest) -> HttpResponseRedirect:
    return _keeping_filters(request, reverse("review-queue"))


def _keeping_filters(request: HttpRequest, url: str) -> HttpResponseRedirect:
    """Redirect with the queue's filters, which travel in the query string from page to page."""
    query = request.GET.copy()
    for position in ("after", "before", "page"):  # "page": links from before pages were cut by position
        query.pop(position, None)
    query.pop("new", None)  # starting a new review is for this call only
    return redirect(f"{url}?{query.urlencode()}" if query else url)
