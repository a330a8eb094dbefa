"""Writes for assignments: a lead gives calls waiting for review to a supervisor; a review closes them."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from access import Capability, may, require
from core.errors import InvalidInputError
from qa.models import Recording
from reviews.models import Assignment


@dataclass(frozen=True)
class AssignmentResult:
    assigned: int  # calls now assigned to the assignee
    skipped: int  # calls not waiting for review (judged only, or already reviewed): nothing to assign


@transaction.atomic
def assignments_create(
    *, recording_ids: list[int], assignee: AbstractBaseUser, assigned_by: AbstractBaseUser
) -> AssignmentResult:
    """Assign the calls among `recording_ids` that wait for review to `assignee`, closing any open
    assignment they had (to someone else, or an earlier one to the same person): one open per call.
    Only who may assign (access.Capability.ASSIGN) may; only someone who may review is an assignee."""
    require(assigned_by, Capability.ASSIGN, _("Only a QA lead assigns calls."))
    if not may(assignee, Capability.REVIEW):
        raise InvalidInputError({"assignee": _("%(user)s does not review calls.") % {"user": assignee.get_username()}})
    waiting = list(
        Recording.objects.filter(pk__in=recording_ids, needs_review=True, status=Recording.Status.IN_REVIEW)
        .select_for_update()
        .values_list("pk", flat=True)
    )
    Assignment.objects.filter(recording_id__in=waiting, closed_at__isnull=True).update(closed_at=timezone.now())
    Assignment.objects.bulk_create(
        Assignment(recording_id=pk, assignee=assignee, assigned_by=assigned_by) for pk in waiting
    )
    return AssignmentResult(assigned=len(waiting), skipped=len(set(recording_ids)) - len(waiting))
