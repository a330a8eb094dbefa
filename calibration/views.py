"""Calibration pages: the sessions, creating one, scoring a call blind, the results."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from access import Capability, SIGNED_IN, page_requires
from access.scope import scope_for
from core.errors import InvalidInputError
from calibration.forms import ScoringForm, SessionCreateForm
from qa.models import UNVERIFIED_MARK
from calibration.selectors import (
    CriterionResults,
    is_calibration_lead,
    scoring_page,
    session_get,
    session_overview,
    session_results,
    sessions_for,
)
from calibration.services import (
    AgreedEntry,
    SessionStateError,
    agreed_values_set,
    calibration_close,
    calibration_create,
    calibration_entry_save,
)
from reviews.figures.export import csv_download
from reviews.figures.formatting import number, percent
from reviews.figures.stats import MIN_N

# Anyone signed in reaches the pages; each session is shown to its lead and participants only (session_get).
signed_in_page = page_requires(SIGNED_IN)
lead_page = page_requires(Capability.RUN_CALIBRATION)


@signed_in_page
@require_GET
def session_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "calibration/list.html",
        {"sessions": sessions_for(request.user), "is_lead": is_calibration_lead(request.user)},
    )


@lead_page
@require_http_methods(["GET", "POST"])
def session_create(request: HttpRequest) -> HttpResponse:
    # The queue's "Send to calibration" opens this form with its calls chosen (calls.views.queue_bulk).
    initial = {name: request.GET[name] for name in ("choose", "rubric", "recording_ids") if name in request.GET}
    form = SessionCreateForm(
        request.POST or None, scope=scope_for(request.user).where(Capability.RUN_CALIBRATION), initial=initial
    )
    if request.method == "POST" and form.is_valid():
        try:
            session = calibration_create(
                name=form.cleaned_data["name"],
                rubric=form.cleaned_data["rubric_version"],
                lead=request.user,
                participants=list(form.cleaned_data["participants"]),
                selection=form.selection(),
                due_date=form.cleaned_data["due_date"],
            )
        except InvalidInputError as error:
            for field, message in error.errors.items():
                if field == "recordings":  # beside what chose them: the ids or the sample size
                    field = form.calls_field()
                form.add_error(field if field in form.fields else None, message)
        else:
            messages.success(request, _("Session created: the participants can score its calls now."))
            return redirect("calibration-detail", pk=session.pk)
    return render(request, "calibration/create.html", {"form": form})


@signed_in_page
@require_GET
def session_detail(request: HttpRequest, pk: int) -> HttpResponse:
    session = session_get(pk=pk, user=request.user)
    if session.is_open:
        overview = session_overview(session=session, user=request.user)
        progress = [(user, overview.entries_by_participant[user.pk]) for user in overview.participants]
        context = {"session": session, "overview": overview, "progress": progress}
        return render(request, "calibration/session.html", context)
    results = session_results(session=session)
    if request.GET.get("format") == "csv":
        return _matrix_csv(request, results)
    calls = results.criteria[0].rows if results.criteria else []
    comments = [
        (row.call.recording.external_id, username, comment)
        for row in sorted(calls, key=lambda row: row.call.pk)
        for username, comment in results.comments.get(row.call.pk, [])
    ]
    context = {
        "session": session,
        "results": results,
        "criteria": [_criterion_display(result, results.participants) for result in results.criteria],
        "comments": comments,
        "is_lead": is_calibration_lead(request.user),
        "min_n": MIN_N,
    }
    return render(request, "calibration/session.html", context)


def _criterion_display(result: CriterionResults, participants: list) -> dict[str, Any]:
    agreement = result.agreement
    figures = [
        ("n", _("Calls with two or more values"), str(agreement.n_units)),
        ("exact", _("Exact agreement"), percent(agreement.exact_agreement)),
        ("within-one", _("Within one point"), percent(agreement.within_one)),
        ("qwk", _("Mean pairwise QWK"), number(agreement.mean_pairwise_qwk)),
        ("alpha", _("Krippendorff's alpha (ordinal)"), number(agreement.alpha)),
        ("judge-qwk", _("Judge vs agreed: QWK"), number(result.judge_vs_agreed_qwk)),
        ("judge-mae", _("Judge vs agreed: MAE"), number(result.judge_vs_agreed_mae)),
    ]
    bias = [(participant.get_username(), _signed(agreement.bias.get(participant.pk))) for participant in participants]
    return {"result": result, "figures": figures, "bias": bias, "too_few": agreement.n_units < MIN_N}


def _signed(value: float | None) -> str:
    return "—" if value is None else ("+" if value > 0 else "") + number(value)


def _matrix_csv(request: HttpRequest, results: Any) -> HttpResponse:
    """One row per call and criterion: each participant's value, the judge's, the spread and the agreed value."""
    usernames = [participant.get_username() for participant in results.participants]

    def shown(value: Any) -> Any:
        if value is None:
            return ""
        return "N/A" if value.not_applicable else value.value

    def rows() -> Iterator[list[Any]]:
        for result in results.criteria:
            for row in result.rows:
                agreed = row.agreed
                yield [
                    row.call.recording_id, row.call.recording.external_id, result.criterion.key,
                    *(shown(value) for value in row.values),
                    shown(row.judge) if row.judge_verified else UNVERIFIED_MARK, row.spread, shown(agreed),
                    agreed.note if agreed else "",
                ]  # fmt: skip

    session = results.session
    header = ["recording_id", "external_id", "criterion_key", *usernames, "judge", "spread", "agreed", "agreed_note"]
    return csv_download(request, f"calibration-{session.pk}.csv", header, rows())


@signed_in_page
@require_POST
def session_close(request: HttpRequest, pk: int) -> HttpResponse:
    session = session_get(pk=pk, user=request.user)
    try:
        calibration_close(session=session, user=request.user)
        messages.success(request, _("Session closed: the results are below."))
    except SessionStateError as error:
        messages.error(request, str(error))
    return redirect("calibration-detail", pk=pk)


@signed_in_page
@require_http_methods(["GET", "POST"])
def call_score(request: HttpRequest, pk: int, recording_id: int) -> HttpResponse:
    session = session_get(pk=pk, user=request.user)
    if not session.participants.filter(pk=request.user.pk).exists():
        raise PermissionDenied
    if not session.is_open:
        messages.info(request, _("The session is closed: entries can no longer change."))
        return redirect("calibration-detail", pk=pk)
    page = scoring_page(session=session, recording_id=recording_id, user=request.user)
    form = ScoringForm(request.POST or None, criteria=page.criteria, own=page.own, own_comment=page.own_comment)
    if request.method == "POST" and form.is_valid():
        try:
            calibration_entry_save(
                session=session,
                recording_id=recording_id,
                participant=request.user,
                answers=form.answers(),
                comment=form.cleaned_data["comment"],
            )
        except InvalidInputError as error:
            for message in _flat(error.errors):
                form.add_error(None, message)
        except SessionStateError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, _("Saved. You can change it until the session closes."))
            following = page.next_call
            if following is not None:
                return redirect("calibration-score", pk=pk, recording_id=following.recording_id)
            return redirect("calibration-detail", pk=pk)
    return render(request, "calibration/score.html", {"page": page, "form": form})


@lead_page
@require_POST
def agree(request: HttpRequest, pk: int) -> HttpResponse:
    """The results page's one agreed-values form: every row, saved together (agreed_values_set)."""
    session = session_get(pk=pk, user=request.user)
    entries, bad = _agreed_entries(request.POST)
    if bad:
        messages.error(request, _("The agreed values were not saved: %(errors)s") % {"errors": " ".join(bad)})
        return redirect("calibration-detail", pk=pk)
    try:
        changed = agreed_values_set(session=session, entries=entries, user=request.user)
    except InvalidInputError as error:
        problems = " ".join(f"{row}: {message}" for row, message in error.errors.items())
        messages.error(request, _("The agreed values were not saved: %(errors)s") % {"errors": problems})
    except SessionStateError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Agreed values saved: %(n)s changed.") % {"n": changed})
    return redirect("calibration-detail", pk=pk)


def _agreed_entries(data: QueryDict) -> tuple[list[AgreedEntry], list[str]]:
    """The form's rows, named agreed:<recording id>:<criterion key>:value|na|note; and what was not a number."""
    entries, bad = [], []
    for name in data:
        parts = name.split(":")
        if len(parts) != 4 or parts[0] != "agreed" or parts[3] != "value" or not parts[1].isdigit():
            continue
        prefix = name[: -len("value")]
        raw = data[name].strip()
        if raw and not raw.lstrip("-").isdigit():
            bad.append(_("%(row)s: the agreed value must be a whole number.") % {"row": f"{parts[1]}-{parts[2]}"})
            continue
        entries.append(
            AgreedEntry(
                recording_id=int(parts[1]),
                criterion_key=parts[2],
                value=int(raw) if raw else None,
                not_applicable=f"{prefix}na" in data,
                note=data.get(f"{prefix}note", ""),
            )
        )
    return entries, bad


def _flat(errors: dict[str, Any]) -> list[str]:
    """A service's error tree ({field: message or {position: message}}) as plain messages."""
    return [message for value in errors.values() for message in (_flat(value) if isinstance(value, dict) else [value])]
