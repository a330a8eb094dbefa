"""Opening a session, acknowledging, commenting: who may, which calls it carries, the events it emits."""

from datetime import timedelta

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied
from django.test import override_settings
from django.utils import timezone

from coaching.models import CoachingSession
from coaching.selectors import sessions_visible
from coaching.services import (
    SessionClosedError,
    coaching_acknowledge,
    coaching_close,
    coaching_comment_add,
    coaching_session_create,
)
from core.errors import InvalidInputError
from outbox.models import Event
from outbox.services import consumer_register
from tests.factories import judged_recording

pytestmark = pytest.mark.django_db(transaction=False)


def later(days=14):
    return timezone.localdate() + timedelta(days=days)


@pytest.fixture
def events():
    """A consumer that wants every event, so emits write rows (as a webhook subscription makes them)."""
    from outbox.services import _consumers

    saved = dict(_consumers)
    consumer_register(name="test-all", wanted=lambda names: set(names), dispatch=lambda ids: None)
    yield
    _consumers.clear()
    _consumers.update(saved)


def open_session(user, rubric, **kw):
    return coaching_session_create(
        user=user, rubric=rubric, agent_id=kw.pop("agent_id", "agent-ana"), criterion_keys=kw.pop("keys", ["c1"]),
        goal=kw.pop("goal", "States the debt amount in the first two minutes"), follow_up_on=kw.pop("follow_up_on", later()),
        **kw,
    )  # fmt: skip


def test_proposed_calls_are_the_worst_verified_values_never_an_unverified_one(sup, care, ana_calls, events):
    session = open_session(sup, care, note="Listen to call 2")
    values = [call.score.value for call in session.calls.select_related("score")]
    # The 1 is unverified: no evidence. The three worst verified values are 2, 3, 4.
    assert values == [2, 3, 4]
    assert all(call.score.evidence_verified and call.proposed for call in session.calls.select_related("score"))
    assert session.team == "support" and session.agent_name == "Ana"
    assert list(Event.objects.filter(subject_id=session.pk).values_list("name", flat=True)) == ["coaching.created"]


def test_a_picked_call_must_carry_a_verified_value(sup, care, ana_calls):
    with pytest.raises(InvalidInputError) as error:
        open_session(sup, care, recording_ids=[ana_calls[0].pk])
    assert "unverified" in error.value.errors["calls"]
    session = open_session(sup, care, recording_ids=[ana_calls[2].pk])
    assert [(c.recording_id, c.proposed) for c in session.calls.all()] == [(ana_calls[2].pk, False)]


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"keys": []}, "criteria"),
        ({"keys": ["c1", "c2", "c3", "c4"]}, "criteria"),
        ({"keys": ["nope"]}, "criteria"),
        ({"goal": "  "}, "goal"),
        ({"follow_up_on": timezone.localdate()}, "follow_up_on"),
        ({"agent_id": "nobody"}, "agent_id"),
    ],
)
def test_bad_input_names_the_field(sup, care, ana_calls, kw, field):
    with pytest.raises(InvalidInputError) as error:
        open_session(sup, care, **kw)
    assert field in error.value.errors
    assert not CoachingSession.objects.exists()


def test_a_team_limited_supervisor_coaches_only_their_teams(sales_sup, sup, care, ana_calls):
    with pytest.raises((PermissionDenied, InvalidInputError)):
        open_session(sales_sup, care)
    judged_recording(rubric=care, agent_id="agent-sol", agent_name="Sol", team="sales")
    session = open_session(sales_sup, care, agent_id="agent-sol")
    other = open_session(sup, care)
    assert list(sessions_visible(user=sales_sup)) == [session]
    assert set(sessions_visible(user=sup)) == {session, other}


def test_an_agent_may_not_open_one(ana, care, ana_calls):
    with pytest.raises(PermissionDenied):
        open_session(ana, care)


def test_the_agent_acknowledges_once_and_only_their_own(sup, ana, bruno, care, ana_calls, events):
    session = open_session(sup, care)
    with pytest.raises(PermissionDenied):
        coaching_acknowledge(session=session, user=bruno)
    with pytest.raises(PermissionDenied):
        coaching_acknowledge(session=session, user=sup)
    coaching_acknowledge(session=session, user=ana)
    first = session.acknowledged_at
    coaching_acknowledge(session=session, user=ana)
    assert session.acknowledged_at == first and session.acknowledged_by == ana
    names = list(Event.objects.filter(subject_id=session.pk).order_by("created_at").values_list("name", flat=True))
    assert names == ["coaching.created", "coaching.acknowledged"]
    assert list(sessions_visible(user=bruno)) == [] and list(sessions_visible(user=ana)) == [session]


def test_comments_by_the_agent_and_the_coach_not_by_another_agent(sup, ana, bruno, care, ana_calls):
    session = open_session(sup, care)
    coaching_comment_add(session=session, user=ana, body="I will try")
    coaching_comment_add(session=session, user=sup, body="Good")
    with pytest.raises(PermissionDenied):
        coaching_comment_add(session=session, user=bruno, body="hi")
    with pytest.raises(InvalidInputError):
        coaching_comment_add(session=session, user=ana, body=" ")
    assert [c.body for c in session.comments.all()] == ["I will try", "Good"]
    coaching_close(session=session, user=sup)
    with pytest.raises(SessionClosedError):
        coaching_comment_add(session=session, user=ana, body="late")


@override_settings(EMAIL_HOST="mail.example.com", EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
def test_the_agent_is_mailed_where_mail_is_set(sup, ana, care, ana_calls, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        session = open_session(sup, care)
    assert [m.to for m in mail.outbox] == [["ana@example.com"]]
    assert f"/coaching/mine/{session.pk}/" in mail.outbox[0].body


def test_no_mail_without_mail_settings(sup, ana, care, ana_calls, django_capture_on_commit_callbacks, settings):
    settings.EMAIL_HOST = ""
    with django_capture_on_commit_callbacks(execute=True):
        open_session(sup, care)
    assert mail.outbox == []
