"""Splitting a workspace: a rubric's family moves to another workspace with everything that hangs on
it (its calls, their teams, calibrations and experiments). Here, in the highest domain package, because it
writes the rows of rubrics, qa, reviews and experiments at once."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from access.models import Team, Workspace
from qa.models import Recording
from experiments.models import Experiment
from rubrics.models import Rubric


@transaction.atomic
def rubric_move(*, slug: str, workspace: Workspace) -> int:
    """Move every version of `slug`, its calls (with their teams), its calibration sessions (they
    follow the rubric) and its experiments to `workspace`; the number of calls moved. People stay
    where they are: the README's split adds them to the new workspace."""
    rubrics = Rubric.objects.filter(slug=slug)
    if not rubrics.exists():
        raise ValidationError({"slug": _("No rubric %(slug)s.") % {"slug": slug}})
    # update(), not save(): a published version refuses save(), and its workspace is not its content.
    rubrics.update(workspace=workspace)
    recordings = Recording.objects.filter(rubric__slug=slug)
    teams = set(recordings.exclude(team="").values_list("team", flat=True).distinct())
    Team.objects.bulk_create([Team(workspace=workspace, name=name) for name in teams], ignore_conflicts=True)
    moved = recordings.update(workspace=workspace)
    Experiment.objects.filter(rubric_slug=slug).update(workspace=workspace)
    return moved
