"""QA leads' dispute pages (the list, one dispute side by side with its call, resolving it), and the
supervisors' and leads' page of which reviews their agents acknowledged, left overdue or disputed."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from access import Capability, page_requires
from core.errors import ConflictError, InvalidInputError
from disputes.forms import ResolveForm
from disputes.selectors import call_view, dispute_detail, dispute_list, reviews_followed_by
from disputes.services import dispute_resolve
from disputes.models import Dispute

lead_page = page_requires(Capability.RESOLVE_DISPUTES)
STANDINGS = ("acknowledged", "waiting", "overdue", "disputed")


@lead_page
@require_GET
def dispute_index(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status") or Dispute.Status.OPEN
    if status not in Dispute.Status.values:
        status = Dispute.Status.OPEN
    disputes = list(dispute_list(user=request.user, status=status)[:200])
    return render(
        request,
        "disputes/list.html",
        {"disputes": disputes, "status": status, "statuses": Dispute.Status.choices, "now": timezone.now()},
    )


@lead_page
@require_http_methods(["GET", "POST"])
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        dispute = dispute_detail(user=request.user, pk=pk)
    except Dispute.DoesNotExist:
        raise Http404(_("No such dispute.")) from None
    disputed = list(dispute.criteria.all())
    form = ResolveForm(request.POST or None, disputed=disputed)
    if request.method == "POST" and form.is_valid():
        try:
            dispute_resolve(
                dispute=dispute, user=request.user, resolutions=form.resolutions(), comment=form.cleaned_data["comment"]
            )
        except InvalidInputError as error:
            form.add_service_errors(error.errors)
        except (ConflictError, PermissionDenied) as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("Dispute resolved; the agent is told."))
            return redirect("disputes:detail", pk=pk)
    view = call_view(recording=dispute.recording, user=request.user, review=dispute.review)
    return render(
        request,
        "disputes/detail.html",
        {"dispute": dispute, "view": view, "page": view.page, "form": form, "now": timezone.now()},
        status=400 if request.method == "POST" else 200,
    )


@page_requires(Capability.REVIEW)
@require_GET
def reviews_followed(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    if status not in STANDINGS:
        status = ""
    rows = reviews_followed_by(user=request.user, status=status)
    return render(request, "disputes/reviews.html", {"rows": rows, "status": status, "standings": STANDINGS})
