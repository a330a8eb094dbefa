"""Writes for experiments: create one (freeze its set, queue its items), run an
item, cancel, promote.

An item is run by qa.execution's executor, the one production runs use (claim
with a lease, the judge's one path, the shared LLM quota, the same retry and
failure rules, the same sweep: core.jobs); it writes only the experiment's own rows.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from kombu.exceptions import OperationalError

from outbox.services import experiment_finished_emit
from access import Capability
from access.scope import EVERYTHING, Scope, scope_for, scope_for_workspace
from core.errors import InvalidInputError
from qa.execution import Job, JudgmentKind, job_execute, job_execute_until_done, rubric_for_judging
from core.jobs import Result, jobs_due
from qa.judging import DraftScore, prompt_version_current
from qa.llm_errors import LLMError
from access.models import ApiKey
from qa.models import Judge
from core.queue import task_publish
from experiments.models import Arm, Experiment, Item, ItemScore, Promotion
from experiments.selectors import EXPERIMENT_GROUPS, experiment_recording_ids
from reviews.filters import Group
from rubrics.models import Rubric
from rubrics.selectors import rubric_latest_published, rubrics_in
from rubrics.services import rubric_publish

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArmSpec:
    """A way to judge the set: a rubric version (None: the published one) and a judge
    (None: production's default); `stored` takes production's scores as they are."""

    rubric_version: int | None = None
    judge: Judge | None = None
    samples: int | None = None  # None: the judge's own
    stored: bool = False


def _arm_rubric(slug: str, version: int | None, field: str, scope: Scope) -> Rubric:
    if version is None:
        rubric = rubric_latest_published(slug=slug, scope=scope)
    else:
        rubric = rubrics_in(scope).filter(slug=slug, version=version).first()
    if rubric is None:
        what = _("a published version") if version is None else _("version %(version)s") % {"version": version}
        raise InvalidInputError({field: _("Rubric %(slug)s has no %(what)s.") % {"slug": slug, "what": what}})
    return rubric


def _arm_label(rubric: Rubric, judge: Judge | None, samples: int, stored: bool) -> str:
    """The arm's name on the page and in the API: an identifier, the same in every language."""
    if stored:
        return "production"
    label = f"v{rubric.version}{' draft' if rubric.is_draft else ''} · {judge.name if judge else 'environment'}"
    return f"{label} ×{samples}" if samples > 1 else label


def _arm_check(spec: ArmSpec, field: str) -> int:
    """The arm's samples, or why the arm cannot run."""
    judge = spec.judge
    if judge is not None and (reason := judge.unavailable_reason):
        raise InvalidInputError({field: reason})
    samples = spec.samples or (judge.samples if judge else 1)
    if not 1 <= samples <= Judge.MAX_SAMPLES:
        raise InvalidInputError({field: _("Samples must be between 1 and %(max)s.") % {"max": Judge.MAX_SAMPLES}})
    if samples > 1 and not (judge and judge.temperature > 0):
        raise InvalidInputError({field: _("Several samples need a judge with a temperature above 0.")})
    return samples


def _arm_prompt_version(rubric: Rubric, judge: Judge | None, field: str) -> str:
    """The question the arm will test: its rubric version (a draft as it is now) asked by its judge."""
    try:
        return prompt_version_current(rubric=rubric, judge=judge)
    except LLMError as error:
        raise InvalidInputError({field: str(error)}) from error


@transaction.atomic
def experiment_create(
    *,
    rubric_slug: str,
    candidates: list[ArmSpec],
    baseline: ArmSpec = ArmSpec(stored=True),  # noqa: B008  (frozen: safe as a default)
    group: str = Group.ALL,
    date_from: date | None = None,
    date_to: date | None = None,
    limit: int | None = None,
    seed: int = 0,
    user: AbstractBaseUser | None = None,
    api_key: ApiKey | None = None,
    publish: bool = True,
) -> Experiment:
    """Freeze the set, create the arms and queue their items (after commit;
    publish=False leaves them for the caller to run in its own process).
    Refuses, storing nothing, an empty set or an arm that cannot run."""
    groups = EXPERIMENT_GROUPS
    if group not in groups:
        raise InvalidInputError({"group": _("Choose one of: %(groups)s.") % {"groups": ", ".join(groups)}})
    if not candidates:
        raise InvalidInputError({"candidates": _("Give at least one candidate.")})
    if limit is not None and limit < 1:
        raise InvalidInputError({"limit": _("The limit must be at least 1.")})
    if date_from and date_to and date_to < date_from:
        raise InvalidInputError({"date_to": _("The end date is before the start date.")})
    specs = [baseline, *candidates]
    # The rubrics the creator may experiment on: their key's workspace, or where they own rubrics.
    if api_key is not None:
        scope = scope_for_workspace(api_key.workspace_id)
    else:
        scope = scope_for(user).where(Capability.RUN_EXPERIMENTS) if user is not None else EVERYTHING
    arms = []
    for order, spec in enumerate(specs):
        field = "baseline" if order == 0 else "candidates"
        rubric = _arm_rubric(rubric_slug, spec.rubric_version, field, scope)
        stored = spec.stored and order == 0
        samples = 1 if spec.stored else _arm_check(spec, field)
        judge = None if spec.stored else spec.judge or Judge.objects.default()
        arms.append(
            Arm(
                order=order,
                rubric=rubric,
                judge=judge,
                stored=stored,
                samples=samples,
                prompt_version="" if stored else _arm_prompt_version(rubric, judge, field),
            )
        )
    recording_ids = experiment_recording_ids(
        rubric_slug=rubric_slug, group=group, date_from=date_from, date_to=date_to, limit=limit, seed=seed
    )
    if not recording_ids:
        message = _("No recording of %(slug)s in this set has a final review with values.")
        raise InvalidInputError({"rubric": message % {"slug": rubric_slug}})
    experiment = Experiment.objects.create(
        workspace_id=arms[0].rubric.workspace_id,  # a slug family lives in one workspace
        rubric_slug=rubric_slug,
        group=group,
        date_from=date_from,
        date_to=date_to,
        limit=limit,
        seed=seed,
        recording_ids=recording_ids,
        created_by=user,
        created_by_key=api_key,
    )
    for arm in arms:
        arm.experiment = experiment
        arm.label = _arm_label(arm.rubric, arm.judge, arm.samples, arm.stored)
    Arm.objects.bulk_create(arms)
    items = Item.objects.bulk_create(
        Item(arm=arm, recording_id=recording_id) for arm in arms if not arm.stored for recording_id in recording_ids
    )
    item_ids = [item.pk for item in items]
    if publish:
        transaction.on_commit(lambda: items_publish(item_ids=item_ids))
    return experiment


def items_publish(*, item_ids: list[int], countdown: float = 0.0) -> int:
    """Hand items to workers; with the broker down they stay pending for the sweep. Without a broker
    (QA_BACKGROUND_THREADS, the first-run default) to a thread of this process: the tasks would run
    inside the request that started the experiment, and its page would wait minutes for them."""
    if settings.QA_BACKGROUND_THREADS:
        threading.Thread(
            target=_items_run, kwargs={"item_ids": item_ids}, name="experiment-items", daemon=True
        ).start()
        return len(item_ids)
    published = 0
    for item_id in item_ids:
        try:
            task_publish("experiments.item_run", item_id, countdown=countdown)
        except OperationalError:
            logger.warning("Broker unreachable: experiment items stay pending for the sweep.", exc_info=True)
            break
        published += 1
    return published


def _items_run(*, item_ids: list[int]) -> None:
    """Judge the items one after another in this thread, through the executor's one path (claims,
    retries, failures); a crash is logged and leaves the items left pending, never the thread's
    connection open."""
    try:
        for item_id in item_ids:
            item_execute_until_done(item_id=item_id)
    except Exception:
        logger.exception("Experiment items stopped in their thread; those left stay pending.")
    finally:
        connection.close()


# --- Running an item --------------------------------------------------------------


class ExperimentItems(JudgmentKind):
    """An experiment's item, run by qa.execution's executor like a production run;
    its result goes to the experiment's own rows (item scores), never to a
    recording, a production run or routing. Cancelling an experiment cancels its
    unfinished items in the same transaction, so no claim (which needs a pending
    item) or store (which needs a running one) gets past it."""

    model = Item
    created_field = "arm__experiment__created_at"

    def sweep_scope(self) -> Q:
        return Q(arm__experiment__status__in=Experiment.ACTIVE)

    def load(self, pk: int) -> Job | None:
        item = (
            Item.objects.select_related("arm__experiment", "arm__judge", "recording")
            .only(
                "arm_id", "recording_id", "status", "attempts",
                "arm__rubric_id", "arm__samples", "arm__prompt_version", "arm__experiment__status",
                "recording__transcript",
                *(f"arm__judge__{field.name}" for field in Judge._meta.concrete_fields),
            )
            .filter(pk=pk, status=Item.Status.PENDING)
            .order_by()
            .first()
        )
        if item is None:
            return None
        arm = item.arm
        return Job(
            row=item,
            rubric=rubric_for_judging(arm.rubric_id, prompt_version=arm.prompt_version),
            judge=arm.judge,
            transcript=item.recording.transcript,
            samples=arm.samples,
            prompt_version=arm.prompt_version,
        )

    def claimed(self, job: Job, now: datetime) -> None:
        experiment = job.row.arm.experiment
        if experiment.status == Experiment.Status.QUEUED:
            Experiment.objects.filter(pk=experiment.pk, status=Experiment.Status.QUEUED).update(
                status=Experiment.Status.RUNNING
            )
            experiment.status = Experiment.Status.RUNNING

    def failed(self, job: Job, error: str, now: datetime) -> None:
        self._settle_after_commit(job)

    def stored(self, job: Job, scores: list[DraftScore], fields: dict, now: datetime) -> None:
        item = job.row
        ItemScore.objects.bulk_create(ItemScore(item=item, criterion=draft.criterion, **draft.fields) for draft in scores)
        self._settle_after_commit(job)

    @staticmethod
    def _settle_after_commit(job: Job) -> None:
        # After commit, so that of two last items finishing at once, the later one sees the other finished.
        experiment_id = job.row.arm.experiment_id
        transaction.on_commit(lambda: experiment_settle(experiment_id=experiment_id))


ITEMS = ExperimentItems()


def item_execute(*, item_id: int) -> Result:
    """Judge one item if it can be claimed; safe to call any number of times."""
    return job_execute(kind=ITEMS, pk=item_id)


def item_execute_until_done(*, item_id: int, sleep: Callable[[float], None] = time.sleep) -> Result:
    """Judge an item in this process, waiting out transient failures (the command's path)."""
    return job_execute_until_done(kind=ITEMS, pk=item_id, sleep=sleep)


def experiment_settle(*, experiment_id: int) -> None:
    """Finish the experiment once no item is left to judge: failed when some arm
    got no judgment at all (nothing to compare), else finished."""
    unfinished = [Item.Status.PENDING, Item.Status.RUNNING]
    if Item.objects.filter(arm__experiment_id=experiment_id, status__in=unfinished).exists():
        return  # the common case, in one cheap query; the last item's worker settles it
    active = Item.objects.filter(arm__experiment_id=OuterRef("pk"), status__in=unfinished)
    empty_arm = Arm.objects.filter(experiment_id=OuterRef("pk"), stored=False).exclude(
        Exists(Item.objects.filter(arm_id=OuterRef("pk"), status=Item.Status.SUCCEEDED))
    )
    done = Experiment.objects.filter(pk=experiment_id, status__in=Experiment.ACTIVE).exclude(Exists(active))
    now = timezone.now()
    with transaction.atomic():  # the event commits with the status it reports
        failed = done.filter(Exists(empty_arm)).update(
            status=Experiment.Status.FAILED, finished_at=now, error="Every call of at least one arm failed."
        )
        if done.update(status=Experiment.Status.FINISHED, finished_at=now) or failed:
            workspace_id = Experiment.objects.values_list("workspace_id", flat=True).get(pk=experiment_id)
            experiment_finished_emit(experiment_id=experiment_id, workspace_id=workspace_id)


@transaction.atomic
def experiment_cancel(*, experiment: Experiment) -> bool:
    """Stop an experiment: items not finished are cancelled, and a worker holding one finds its claim gone."""
    if not Experiment.objects.filter(pk=experiment.pk, status__in=Experiment.ACTIVE).update(
        status=Experiment.Status.CANCELLED, finished_at=timezone.now()
    ):
        return False
    Item.objects.filter(
        arm__experiment=experiment, status__in=[Item.Status.PENDING, Item.Status.RUNNING]
    ).update(status=Item.Status.CANCELLED)
    experiment.refresh_from_db()
    return True


def items_sweep() -> int:
    """Hand out again items whose worker died or whose message was lost, as the production sweep does for runs."""
    return items_publish(item_ids=list(jobs_due(kind=ITEMS).values_list("pk", flat=True)))


# --- Promoting a candidate ----------------------------------------------------------


def _arm_tested_draft_check(arm: Arm) -> None:
    """Refuse to publish a draft that no longer builds the question the arm tested."""
    # Locked, so that no other publication of this draft comes between the check and ours.
    rubric = Rubric.objects.select_for_update().get(pk=arm.rubric_id)
    if not rubric.is_draft:
        return  # rubric_publish says why it cannot publish it
    try:
        current = prompt_version_current(rubric=rubric, judge=arm.judge)
    except LLMError as error:
        raise InvalidInputError({"arm": str(error)}) from error
    # What the arm was bound to, and what its items were asked (arms created
    # before the binding was recorded have only the latter).
    asked = arm.items.filter(status=Item.Status.SUCCEEDED).order_by().values_list("prompt_version", flat=True)
    tested = {arm.prompt_version, *asked.distinct()} - {""}
    if tested != {current}:
        message = _(
            "Draft version %(version)s no longer asks the question this experiment tested: it changed after the "
            "experiment was created (or its judge now asks for another answer format). Nothing was published: "
            "create a new experiment to test it as it is now."
        )
        raise InvalidInputError({"arm": message % {"version": rubric.version}})


@transaction.atomic
def experiment_promote(*, experiment: Experiment, arm: Arm, action: str, user: AbstractBaseUser) -> Promotion:
    """Publish the candidate's draft, or make its judge production's default; logged with the experiment."""
    if arm.experiment_id != experiment.pk or arm.is_baseline:
        raise InvalidInputError({"arm": _("Choose a candidate of this experiment.")})
    if experiment.status != Experiment.Status.FINISHED:
        raise InvalidInputError({"arm": _("Only a finished experiment can justify a change.")})
    if action == Promotion.Action.PUBLISH_RUBRIC:
        _arm_tested_draft_check(arm)
        try:
            rubric_publish(rubric=arm.rubric)
        except ValidationError as error:  # frozen meanwhile, or lint errors block it
            raise InvalidInputError({"arm": " ".join(error.messages)}) from error
    elif action == Promotion.Action.DEFAULT_JUDGE:
        if arm.judge is None:
            message = _("This candidate uses the environment's judge, which is already the default.")
            raise InvalidInputError({"arm": message})
        Judge.objects.filter(is_default=True).exclude(pk=arm.judge.pk).update(is_default=False)
        Judge.objects.filter(pk=arm.judge.pk).update(is_default=True)
    else:
        raise InvalidInputError({"action": _("Unknown action.")})
    promotion = Promotion.objects.create(experiment=experiment, arm=arm, action=action, user=user)
    logger.info("Experiment %s: %s (arm %s) by %s.", experiment.pk, action, arm.label, user)
    return promotion
