"""Writes for calibration sessions. The pages, the API and the command all go through here."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from access import Capability, may, require
from access.scope import scope_for
from core.errors import InvalidInputError
from qa.models import Recording
from calibration.selectors import (
    CallSelection,
    calibration_pool,
    calibration_pool_of_earlier_versions,
    is_calibration_lead,
)
from reviews.models import AgreedValue, CalibrationCall, CalibrationEntry, CalibrationSession, CalibrationValue
from rubrics.models import Criterion, Rubric

# A session is discussed call by call in a meeting: more calls than this is a mistake in the filter.
MAX_CALLS = 200
PARTICIPANT_CAPABILITY = Capability.REVIEW  # participants are supervisors


class SessionStateError(Exception):
    """The session is not in the state the action needs (entries after close, agreed values before it)."""


@dataclass(frozen=True)
class CalibrationAnswer:
    criterion_key: str
    value: int | None = None
    not_applicable: bool = False


@transaction.atomic
def calibration_create(
    *,
    name: str,
    rubric: Rubric,
    lead: AbstractBaseUser,
    participants: Sequence[AbstractBaseUser],
    selection: CallSelection,
    due_date: date | None = None,
) -> CalibrationSession:
    """Open a session on the chosen calls. Refuses, naming the problem, before anything is written."""
    errors: dict[str, str] = {}
    if not name.strip():
        errors["name"] = _("Give the session a name.")
    if not is_calibration_lead(lead, rubric.workspace_id):
        errors["lead"] = _("%(user)s may not run calibration sessions (the QA leads group may).") % {"user": lead}
    unique = list({user.pk: user for user in participants}.values())
    if len(unique) < 2:
        errors["participants"] = _("A calibration needs at least two participants.")
    elif not_supervisors := [
        str(user) for user in unique if not scope_for(user).may(PARTICIPANT_CAPABILITY, rubric.workspace_id)
    ]:
        errors["participants"] = _("Only supervisors can take part; not: %(users)s.") % {
            "users": ", ".join(not_supervisors)
        }
    recording_ids, call_error = _choose_calls(rubric, selection)
    if call_error:
        errors["recordings"] = call_error
    if errors:
        raise InvalidInputError(errors)

    session = CalibrationSession.objects.create(
        name=name.strip(), rubric=rubric, lead=lead, due_date=due_date, selection=selection.as_record()
    )
    session.participants.set(unique)
    runs = dict(calibration_pool(rubric).filter(pk__in=recording_ids).values_list("pk", "current_run_id"))
    CalibrationCall.objects.bulk_create(
        CalibrationCall(session=session, recording_id=pk, run_id=runs[pk]) for pk in recording_ids
    )
    return session


def _choose_calls(rubric: Rubric, selection: CallSelection) -> tuple[list[int], str]:
    """The chosen recording ids, in order, or a message saying why none can be chosen."""
    pool = calibration_pool(rubric, selection)
    if selection.recording_ids:
        wanted = list(dict.fromkeys(selection.recording_ids))
        found = set(pool.filter(pk__in=wanted).values_list("pk", flat=True))
        if missing := [str(pk) for pk in wanted if pk not in found]:
            return [], _("Not judged calls of %(rubric)s v%(version)s (or not matching the filters): %(ids)s.") % {
                "rubric": rubric.slug,
                "version": rubric.version,
                "ids": ", ".join(missing),
            }
        chosen = wanted
    else:
        available = sorted(pool.values_list("pk", flat=True))
        if selection.sample is not None:
            if selection.sample < 1:
                return [], _("The sample needs at least one call.")
            if selection.sample > len(available):
                message = ngettext(
                    "Only %(count)s judged call matches; a sample of %(sample)s is not possible.",
                    "Only %(count)s judged calls match; a sample of %(sample)s is not possible.",
                    len(available),
                ) % {
                    "count": len(available),
                    "sample": selection.sample,
                }
                return [], " ".join([message, *_why_so_few(rubric, selection)])
            # Sorted ids and a seeded generator: the same seed draws the same calls again.
            chosen = sorted(random.Random(selection.seed).sample(available, selection.sample))
        else:
            chosen = available
    if not chosen:
        message = _("No judged calls of %(rubric)s v%(version)s match.") % {
            "rubric": rubric.name,
            "version": rubric.version,
        }
        return [], " ".join([message, *_why_so_few(rubric, selection)])
    if len(chosen) > MAX_CALLS:
        return [], _("%(count)s calls match; a session takes at most %(max)s: narrow the filters or draw a sample.") % {
            "count": len(chosen),
            "max": MAX_CALLS,
        }
    return chosen, ""


def _why_so_few(rubric: Rubric, selection: CallSelection) -> list[str]:
    """Why the pool is small, where the reason is a newer version: a session scores the published version's
    criteria, so only calls judged with that version count; calls judged with earlier ones wait for a re-judge."""
    earlier = calibration_pool_of_earlier_versions(rubric, selection)
    if not earlier:
        return []
    return [
        _(
            "Only calls judged with v%(version)s, the published version, can be calibrated on it; %(earlier)s "
            "matching calls were judged with earlier versions (re-judge them, or wait for new calls)."
        )
        % {"version": rubric.version, "earlier": earlier}
    ]


@transaction.atomic
def calibration_entry_save(
    *,
    session: CalibrationSession,
    recording_id: int,
    participant: AbstractBaseUser,
    answers: Sequence[CalibrationAnswer],
    comment: str = "",
) -> CalibrationEntry:
    """Store (or replace) a participant's values for one call: every criterion once,
    a value on its scale or "does not apply" where the rubric allows it."""
    # Locked so an entry cannot slip in while the lead closes the session.
    session = CalibrationSession.objects.select_for_update().get(pk=session.pk)
    if not session.is_open:
        raise SessionStateError(_("The session is closed: entries can no longer change."))
    if not session.participants.filter(pk=participant.pk).exists():
        raise PermissionDenied(_("%(user)s does not take part in this session.") % {"user": participant})
    call = session.calls.filter(recording_id=recording_id).first()
    if call is None:
        raise InvalidInputError({"recording": _("Recording %(id)s is not in this session.") % {"id": recording_id}})
    criteria = {criterion.key: criterion for criterion in session.rubric.criteria.prefetch_related("exceptions")}
    errors = _answer_errors(answers, criteria)
    if errors:
        raise InvalidInputError({"criteria": errors})

    entry, _created = CalibrationEntry.objects.update_or_create(
        call=call, participant=participant, defaults={"comment": comment}
    )
    entry.values.all().delete()
    CalibrationValue.objects.bulk_create(
        CalibrationValue(
            entry=entry,
            criterion=criteria[answer.criterion_key],
            value=None if answer.not_applicable else answer.value,
            not_applicable=answer.not_applicable,
        )
        for answer in answers
    )
    return entry


def _answer_errors(answers: Sequence[CalibrationAnswer], criteria: dict[str, Criterion]) -> dict[str, str]:
    """One message per bad answer, keyed by its position; a criterion left out is named under its key."""
    errors: dict[str, str] = {}
    seen: set[str] = set()
    for index, answer in enumerate(answers):
        criterion = criteria.get(answer.criterion_key)
        message = value_error(criterion, answer.value, answer.not_applicable) if criterion else ""
        if criterion is None:
            message = _("Unknown criterion '%(key)s' for this rubric.") % {"key": answer.criterion_key}
        elif answer.criterion_key in seen:
            message = _("Criterion '%(key)s' appears twice.") % {"key": answer.criterion_key}
        if message:
            errors[str(index)] = message
        seen.add(answer.criterion_key)
    for key in criteria:
        if key not in seen:
            errors[key] = _("'%(key)s' needs a value, or \"does not apply\".") % {"key": key}
    return errors


def value_error(criterion: Criterion, value: int | None, not_applicable: bool) -> str:
    """Why a human value for the criterion is refused, or "" when it is fine."""
    if not_applicable and value is not None:
        return _("'%(key)s' has a value and is marked not applicable: choose one.") % {"key": criterion.key}
    if not_applicable and not criterion.allows_not_applicable():
        return _("'%(key)s' cannot be marked not applicable: its rubric lists no \"not applicable\" exception.") % {
            "key": criterion.key
        }
    if not not_applicable and value is None:
        return _("'%(key)s' needs a value, or \"does not apply\".") % {"key": criterion.key}
    if value is not None and not criterion.in_scale(value):
        return _("'%(key)s' must be between %(low)s and %(high)s.") % {
            "key": criterion.key,
            "low": criterion.scale_min,
            "high": criterion.scale_max,
        }
    return ""


@transaction.atomic
def calibration_close(*, session: CalibrationSession, user: AbstractBaseUser) -> CalibrationSession:
    """End the scoring: entries freeze, and everyone may now see everyone's values."""
    session = CalibrationSession.objects.select_for_update().select_related("rubric").get(pk=session.pk)
    if not is_calibration_lead(user, session.rubric.workspace_id):
        raise PermissionDenied(_("Only a QA lead can close a calibration session."))
    if not session.is_open:
        raise SessionStateError(_("The session is already closed."))
    session.status = CalibrationSession.Status.CLOSED
    session.closed_at = timezone.now()
    session.save(update_fields=["status", "closed_at"])
    return session


@transaction.atomic
def agreed_value_set(
    *,
    session: CalibrationSession,
    recording_id: int,
    criterion_key: str,
    value: int | None,
    not_applicable: bool,
    note: str,
    user: AbstractBaseUser,
) -> AgreedValue:
    """Record (or correct) what the session agreed for one call and criterion, once it is closed."""
    session = CalibrationSession.objects.select_related("rubric").get(pk=session.pk)
    if not is_calibration_lead(user, session.rubric.workspace_id):
        raise PermissionDenied(_("Only a QA lead can record agreed values."))
    if session.is_open:
        raise SessionStateError(_("Close the session before recording agreed values."))
    call = session.calls.filter(recording_id=recording_id).first()
    criterion = session.rubric.criteria.prefetch_related("exceptions").filter(key=criterion_key).first()
    errors: dict[str, str] = {}
    if call is None:
        errors["recording"] = _("Recording %(id)s is not in this session.") % {"id": recording_id}
    if criterion is None:
        errors["criterion_key"] = _("Unknown criterion '%(key)s' for this rubric.") % {"key": criterion_key}
    elif message := value_error(criterion, value, not_applicable):
        errors["value"] = message
    if errors:
        raise InvalidInputError(errors)
    agreed, _created = AgreedValue.objects.update_or_create(
        call=call,
        criterion=criterion,
        defaults={"value": value, "not_applicable": not_applicable, "note": note.strip(), "agreed_by": user},
    )
    # The call's human reference changed: the scorecards' rollup reads its week again.
    Recording.objects.filter(pk=recording_id).update(rollup_stale=True)
    return agreed


@dataclass(frozen=True)
class AgreedEntry:
    """One row of the results page's agreed-values form."""

    recording_id: int
    criterion_key: str
    value: int | None
    not_applicable: bool
    note: str


@transaction.atomic
def agreed_values_set(
    *, session: CalibrationSession, entries: Sequence[AgreedEntry], user: AbstractBaseUser
) -> int:
    """Record the agreed values of the whole results page at once (one form, not a Save per row): a blank row
    is no agreement yet and an unchanged one is left as it is (its `agreed_by` stays). All or nothing: any
    bad row raises InvalidInputError keyed "<recording>-<criterion>", and none is stored. Returns how many changed."""
    stored = {
        (agreed.call.recording_id, agreed.criterion.key): (agreed.value, agreed.not_applicable, agreed.note)
        for agreed in AgreedValue.objects.filter(call__session=session).select_related("call", "criterion")
    }
    errors: dict[str, str] = {}
    changed = 0
    for entry in entries:
        given = (entry.value, entry.not_applicable, entry.note.strip())
        blank = entry.value is None and not entry.not_applicable and not given[2]
        if blank or stored.get((entry.recording_id, entry.criterion_key)) == given:
            continue
        try:
            agreed_value_set(
                session=session,
                recording_id=entry.recording_id,
                criterion_key=entry.criterion_key,
                value=entry.value,
                not_applicable=entry.not_applicable,
                note=entry.note,
                user=user,
            )
        except InvalidInputError as error:
            errors[f"{entry.recording_id}-{entry.criterion_key}"] = " ".join(str(m) for m in error.errors.values())
        else:
            changed += 1
    if errors:
        raise InvalidInputError(errors)
    return changed
