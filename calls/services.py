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
from calls.models import SavedSearch


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


@transaction.atomic
def saved_search_save(*, user: AbstractBaseUser, name: str, query: str) -> tuple[SavedSearch, bool]:
    """Keep `query` (the calls list's filters and words, as a query string) under `name` for `user`; a name
    they already use takes the new query. Returns the search and whether it is new."""
    name = name.strip()
    if not name:
        raise InvalidInputError({"name": _("Give the search a name.")})
    if "\x00" in name:  # PostgreSQL refuses it in text: a clear refusal, not a server error
        raise InvalidInputError({"name": _("A name cannot contain a null character.")})
    if len(name) > SavedSearch._meta.get_field("name").max_length:
        raise InvalidInputError({"name": _("A name has at most 100 characters.")})
    search, created = SavedSearch.objects.select_for_update().update_or_create(user=user, name=name, defaults={"query": query})
    return search, created


def saved_search_delete(*, user: AbstractBaseUser, saved_search_id: int) -> SavedSearch | None:
    """Delete one of `user`'s saved searches and return it; None where they have none by that id (another
    person's is not theirs to delete, nor to know of)."""
    search = SavedSearch.objects.filter(user=user, pk=saved_search_id).first()
    if search is not None:
        search.delete()
    return search
