"""The coaching pages through Django's client: opened from an agent's scorecard criterion and from a reviewed call,
the coach's session page with its effect, the agent's own pages (acknowledge, comment), the lead's list, in both
languages. The effect's figures are checked against the scorecard's own estimator on the same calls."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from coaching.models import CoachingSession
from coaching.selectors import session_effect
from coaching.services import coaching_session_create
from insights.scorecards.selectors import agent_card
from reviews.filters import ReportFilters
from tests.disputes.conftest import reviewed_call

pytestmark = pytest.mark.django_db


def client(user, language="en"):
    c = Client(HTTP_ACCEPT_LANGUAGE=language)
    c.force_login(user)
    return c


def days_ago(n):
    return timezone.now() - timedelta(days=n)


@pytest.fixture
def history(care, sup):
    """Ana's reviewed calls: c1 = 2 before the session (days 10–8 ago), 4 after (days 3–1 ago); Bruno, in the same
    team, 3 in both: every call reviewed, so every estimate is exact."""
    for day in (10, 9, 8):
        reviewed_call(care, "agent-ana", sup, values={"c1": 2}, team="support", occurred_at=days_ago(day))
        reviewed_call(care, "agent-bruno", sup, values={"c1": 3}, team="support", occurred_at=days_ago(day))
    for day in (3, 2, 1):
        reviewed_call(care, "agent-ana", sup, values={"c1": 4}, team="support", occurred_at=days_ago(day))
        reviewed_call(care, "agent-bruno", sup, values={"c1": 3}, team="support", occurred_at=days_ago(day))


def session_at(sup, care, days_back=5, follow_up_in=7):
    session = coaching_session_create(
        user=sup, rubric=care, agent_id="agent-ana", criterion_keys=["c1"], goal="Confirm the amount",
        follow_up_on=timezone.localdate() + timedelta(days=follow_up_in),
    )  # fmt: skip
    CoachingSession.objects.filter(pk=session.pk).update(created_at=days_ago(days_back))
    session.refresh_from_db()
    return session


def test_the_effect_reads_the_scorecards_estimates_of_the_same_days(sup, care, history):
    session = session_at(sup, care)
    periods, rows = session_effect(session=session)
    effect = rows[0].effect
    assert (effect.before.estimate, effect.after.estimate) == (2.0, 4.0)
    assert effect.change.estimate == 2.0 and effect.change.ci == (2.0, 2.0)  # every call known: exact
    assert effect.team_change.estimate == 0.0 and effect.effect.estimate == 2.0
    # The scorecard's agent page over the before period gives the same estimate.
    card = agent_card(ReportFilters(rubric=care, date_from=periods.before[0], date_to=periods.before[1]), "agent-ana")
    assert next(c for c in card.criteria if c.column.key == "c1").agent.estimate == effect.before.estimate


def test_a_supervisor_opens_a_session_from_the_agents_scorecard(sup, care, history):
    c = client(sup)
    page = c.get(reverse("scorecards:agent"), {"rubric": care.slug, "agent": "agent-ana"}).content.decode()
    link = f'{reverse("coaching:new")}?rubric={care.pk}&amp;agent=agent-ana&amp;criterion=c1'
    assert link in page
    form = c.get(link.replace("&amp;", "&"))
    assert form.status_code == 200
    assert re.search(r'<input type="checkbox" name="criteria" value="c1"[^>]*checked', form.content.decode())
    follow_up = (timezone.localdate() + timedelta(days=14)).isoformat()
    answer = c.post(
        reverse("coaching:new"),
        {"rubric": care.pk, "agent": "agent-ana", "criteria": ["c1"], "goal": "Confirm the amount", "follow_up_on": follow_up},
    )
    session = CoachingSession.objects.get()
    assert answer.status_code == 302 and answer["Location"] == reverse("coaching:detail", args=[session.pk])
    page = c.get(answer["Location"]).content.decode()
    assert "Confirm the amount" in page and "Rest of the team" in page and "Did it work?" in page
    # Every call the session carries is a verified value of the agent's on c1, lowest first.
    assert [call.score.value for call in session.calls.select_related("score")] == [2, 2, 2]


def test_bad_input_is_shown_at_its_field(sup, care, history):
    answer = client(sup).post(
        reverse("coaching:new"),
        {"rubric": care.pk, "agent": "agent-ana", "criteria": ["c1"], "goal": "x", "follow_up_on": timezone.localdate().isoformat()},
    )
    assert answer.status_code == 400 and "The follow-up date must be after today." in answer.content.decode()
    assert not CoachingSession.objects.exists()


def test_from_a_reviewed_call_the_call_is_ticked(sup, care, history):
    call = reviewed_call(care, "agent-ana", sup, values={"c1": 1}, team="support")
    c = client(sup)
    assert f'{reverse("coaching:new")}?recording={call.pk}' in c.get(reverse("review-detail", args=[call.pk])).content.decode()
    page = c.get(reverse("coaching:new"), {"recording": call.pk}).content.decode()
    assert re.search(rf'<input type="checkbox" name="calls" value="{call.pk}"[^>]*checked', page)


def test_the_agent_reads_acknowledges_and_comments_on_their_own_only(sup, ana, bruno, care, history):
    session = session_at(sup, care)
    c = client(ana)
    assert "Confirm the amount" in c.get(reverse("coaching:mine")).content.decode()
    page = c.get(reverse("coaching:mine-detail", args=[session.pk])).content.decode()
    assert "Did it work?" in page and "Rest of the team" not in page  # no team figure is the agent's
    assert c.post(reverse("coaching:mine-acknowledge", args=[session.pk])).status_code == 302
    assert c.post(reverse("coaching:mine-detail", args=[session.pk]), {"body": "Understood"}).status_code == 302
    session.refresh_from_db()
    assert session.acknowledged_by == ana and session.comments.get().body == "Understood"
    other = client(bruno)
    assert other.get(reverse("coaching:mine-detail", args=[session.pk])).status_code == 404
    assert other.post(reverse("coaching:mine-acknowledge", args=[session.pk])).status_code == 404
    assert "Confirm the amount" not in other.get(reverse("coaching:mine")).content.decode()


def test_the_leads_list_of_open_and_due_sessions_in_spanish(sup, lead, care, history):
    due = session_at(sup, care, follow_up_in=1)
    CoachingSession.objects.filter(pk=due.pk).update(follow_up_on=timezone.localdate())
    later = session_at(sup, care, follow_up_in=20)
    c = client(lead, "es")
    page = c.get(reverse("coaching:list"), {"state": "due"}).content.decode()
    assert reverse("coaching:detail", args=[due.pk]) in page and reverse("coaching:detail", args=[later.pk]) not in page
    assert "Sesiones de coaching" in page
    page = c.get(reverse("coaching:list"), {"state": "open"}).content.decode()
    assert reverse("coaching:detail", args=[later.pk]) in page
    assert "¿Funcionó?" in c.get(reverse("coaching:detail", args=[due.pk])).content.decode()


def test_the_leads_summary_of_what_coaching_has_done(sup, lead, care, history):
    session_at(sup, care)
    page = client(lead).get(reverse("coaching:list")).content.decode()
    summary = page[page.index('id="summary-table"') :]
    # One session: Ana's change +2 against the rest of the team's 0, every call reviewed (an exact interval).
    assert "+2.00 <span class=\"interval\">[+2.00, +2.00]</span>" in summary
    assert "every coach" in summary and ">sup<" in summary
