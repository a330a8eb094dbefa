"""The experiments pages: the list with the form that creates one, an
experiment's progress and comparison, a criterion's recordings, and the
confirmed actions (cancel, promote)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from access import Capability, may, page_requires, require
from access.scope import scope_for
from core.errors import InvalidInputError
from experiments.forms import ExperimentForm
from experiments.models import Experiment, Promotion
from experiments.selectors import (
    Comparison,
    Verdict,
    experiment_comparison,
    experiment_criterion_rows,
    experiment_criterion_titles,
    experiments_list,
)
from experiments.services import ArmSpec, experiment_cancel, experiment_create, experiment_promote
from reviews.figures.charts import Series, interval_chart
from reviews.figures.formatting import number


# Supervisors read experiments; rubric owners also create, cancel and promote them.
reader_page = page_requires(Capability.READ_EXPERIMENTS)
runner_page = page_requires(Capability.RUN_EXPERIMENTS)


@reader_page
def index(request: HttpRequest) -> HttpResponse:
    form = ExperimentForm(request.POST or None, scope=scope_for(request.user))
    if request.method == "POST":
        require(request.user, Capability.RUN_EXPERIMENTS)
        if form.is_valid():
            data = form.cleaned_data
            try:
                experiment = experiment_create(
                    rubric_slug=data["rubric"],
                    candidates=[
                        ArmSpec(rubric_version=data["candidate_version"], judge=data["judge"], samples=data["samples"])
                    ],
                    baseline=ArmSpec(stored=data["baseline"] == "stored"),
                    group=data["group"],
                    date_from=data["since"],
                    date_to=data["until"],
                    limit=data["limit"],
                    seed=data["seed"],
                    user=request.user,
                )
            except InvalidInputError as error:
                for message in error.errors.values():
                    form.add_error(None, str(message))
            else:
                return redirect("experiments:detail", pk=experiment.pk)
    return render(
        request,
        "experiments/index.html",
        {"experiments": experiments_list(scope=scope_for(request.user))[:100], "form": form, "can_run": may(request.user, Capability.RUN_EXPERIMENTS)},
    )


def _summary(comparison: Comparison, label: str, name: str) -> str:
    """The verdict in a rubric owner's words (`label` the arm's identifier, `name` what the page calls it)."""
    counts = comparison.verdict_counts(label)
    parts = [
        _("%(arm)s is closer to the supervisors on %(n)s criteria") % {"arm": name, "n": counts[Verdict.BETTER]},
        _("further on %(n)s") % {"n": counts[Verdict.WORSE]},
        _("no detectable difference on %(n)s") % {"n": counts[Verdict.NO_DIFFERENCE]},
    ]
    if counts[Verdict.NO_REFERENCE]:
        parts.append(_("no human reference for %(n)s") % {"n": counts[Verdict.NO_REFERENCE]})
    return ", ".join(parts) + "."


VERDICT_LABELS = {
    Verdict.BETTER: gettext_lazy("better"),
    Verdict.WORSE: gettext_lazy("worse"),
    Verdict.NO_DIFFERENCE: gettext_lazy("no difference"),
    Verdict.NO_REFERENCE: gettext_lazy("no human reference"),
}


@reader_page
def detail(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = get_object_or_404(experiments_list(scope=scope_for(request.user)), pk=pk)
    comparison = experiment_comparison(experiment)
    keys = list(dict.fromkeys(row.criterion_key for arm in comparison.arms for row in arm.criteria))
    titles = experiment_criterion_titles(experiment)
    by_arm = [{row.criterion_key: row for row in arm.criteria} for arm in comparison.arms]
    chart = interval_chart(
        [titles.get(key, key) for key in keys],
        [
            Series(arm.arm.display_name, [rows.get(key) and rows[key].mae for key in keys])
            for arm, rows in zip(comparison.arms, by_arm, strict=True)
        ],
        [[rows.get(key) and rows[key].mae_ci for key in keys] for rows in by_arm],
        title=_("MAE against the supervisors, with its 95 percent interval"),
        fmt=number,
    )
    candidates = [
        {"arm": arm, "summary": _summary(comparison, arm.label, arm.arm.display_name), "can_publish": arm.arm.rubric.is_draft}
        for arm in comparison.arms[1:]
    ]
    return render(
        request,
        "experiments/detail.html",
        {
            "experiment": experiment,
            "comparison": comparison,
            "chart": chart,
            "titles": titles,
            "candidates": candidates,
            "deltas": [(delta, VERDICT_LABELS[delta.verdict]) for delta in comparison.deltas],
            "names": {arm.label: arm.arm.display_name for arm in comparison.arms},
            "can_run": may(request.user, Capability.RUN_EXPERIMENTS),
            "promotions": experiment.promotions.select_related("arm", "user"),
        },
    )


# Recordings per page of a criterion's drill-down: each row quotes every arm.
CRITERION_PAGE_SIZE = 50


@reader_page
def criterion(request: HttpRequest, pk: int, key: str) -> HttpResponse:
    experiment = get_object_or_404(experiments_list(scope=scope_for(request.user)), pk=pk)
    # The set is a frozen list of ids: a page of it is a slice, and only that page's rows are read.
    page = Paginator(sorted(experiment.recording_ids), CRITERION_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "experiments/criterion.html",
        {
            "experiment": experiment,
            "key": key,
            "title": experiment_criterion_titles(experiment).get(key, key),
            "arms": list(experiment.arms.order_by("order")),
            "rows": experiment_criterion_rows(experiment, key, recording_ids=page.object_list),
            "page": page,
        },
    )


@runner_page
@require_POST
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    experiment = _runnable(request, pk)
    if experiment_cancel(experiment=experiment):
        messages.success(request, _("The experiment was cancelled."))
    return redirect("experiments:detail", pk=pk)


@runner_page
def promote(request: HttpRequest, pk: int, arm_id: int, action: str) -> HttpResponse:
    """GET asks for confirmation; only the confirmed POST changes anything."""
    experiment = _runnable(request, pk)
    arm = get_object_or_404(experiment.arms, pk=arm_id)  # of an experiment read in scope (_runnable)
    if action not in Promotion.Action.values:
        raise PermissionDenied
    if request.method == "POST":
        try:
            experiment_promote(experiment=experiment, arm=arm, action=action, user=request.user)
        except InvalidInputError as error:
            messages.error(request, " ".join(str(message) for message in error.errors.values()))
        else:
            messages.success(request, Promotion.Action(action).label)
        return redirect("experiments:detail", pk=pk)
    return render(
        request,
        "experiments/promote.html",
        {"experiment": experiment, "arm": arm, "action": Promotion.Action(action)},
    )


def _runnable(request: HttpRequest, pk: int) -> Experiment:
    """An experiment of the reader's scope that they may run there (a rubric owner of its workspace)."""
    experiment = get_object_or_404(experiments_list(scope=scope_for(request.user)), pk=pk)
    if not scope_for(request.user).may(Capability.RUN_EXPERIMENTS, experiment.workspace_id):
        raise PermissionDenied
    return experiment
