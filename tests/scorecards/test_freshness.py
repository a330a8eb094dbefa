"""While Celery beat refreshes the rollups, pages read them as of its last pass and say so; without a beat (the
first run) or with one stopped, a page brings them up to date itself (insights.scorecards.freshness)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.test import Client
from rest_framework.test import APIClient

from insights.models import RollupClock
from insights.scorecards import freshness
from insights.scorecards.services import scorecard_weeks_refresh_all
from qa.models import Recording
from tests.disputes.conftest import agent_user
from tests.scorecards.conftest import call

pytestmark = pytest.mark.django_db

SCORECARD = reverse("scorecards:scorecard") + "?rubric=care"
PAGES = [
    SCORECARD,
    reverse("scorecards:agent") + "?rubric=care&agent=a1",
    reverse("dashboard") + "?rubric=care",
    reverse("reports:deviation") + "?rubric=care",
    reverse("reports:evidence") + "?rubric=care",
]
NOTE = {
    "en": "Figures as of {at}: 1 call judged or reviewed since then is counted at the next refresh.",
    "es": "Cifras a las {at}: 1 llamada evaluada o revisada desde entonces se contará en la próxima actualización.",
}


def a1_judged(client, language: str = "en") -> str:
    """The counts under a1's criterion cell on the scorecard page ("20 judged · 10 audited · 10 reviewed")."""
    rows = client.get(SCORECARD, HTTP_ACCEPT_LANGUAGE=language).context["rows"]
    return next(item["cells"][1][0].counts for item in rows if item["row"].agent_id == "a1")


def note_of(response) -> str | None:
    html = response.content.decode()
    if 'id="figures-as-of"' not in html:
        return None
    return " ".join(html.split('id="figures-as-of">')[1].split("</p>")[0].split())


@pytest.mark.parametrize("language", ["en", "es"])
def test_while_the_beat_keeps_up_every_page_reads_its_last_pass_and_says_so(client, supervisor, teams_data, language):
    scorecard_weeks_refresh_all()  # the beat's pass: every call in the rollups, the clock set
    clock = RollupClock.objects.get()
    client.force_login(supervisor)
    assert note_of(client.get(SCORECARD, HTTP_ACCEPT_LANGUAGE=language)) is None  # nothing changed since
    before = a1_judged(client)

    late = call(teams_data, "a1", "north", {"c1": 1})  # judged after the beat's pass
    at = timezone.localtime(clock.started_at).strftime("%H:%M")
    for url in PAGES:
        assert note_of(client.get(url, HTTP_ACCEPT_LANGUAGE=language)) == NOTE[language].format(at=at), url
    agent = Client()
    agent.force_login(agent_user("agent-a1", "a1"))
    mine = agent.get(reverse("agents:scorecard") + "?rubric=care", HTTP_ACCEPT_LANGUAGE=language)
    assert note_of(mine) == NOTE[language].format(at=at)
    # Read as they were: the late call is not counted yet and stays marked for the beat.
    assert a1_judged(client) == before
    assert Recording.objects.get(pk=late.pk).rollup_stale

    api = APIClient()
    api.force_authenticate(supervisor)
    for path in ("/api/scorecards/", "/api/reports/deviation/", "/api/reports/evidence/"):
        as_of = api.get(path, {"rubric": "care"}).json()["as_of"]
        assert (parse_datetime(as_of["at"]), as_of["behind"]) == (clock.started_at, 1), path

    scorecard_weeks_refresh_all()  # the next pass counts it
    assert note_of(client.get(SCORECARD, HTTP_ACCEPT_LANGUAGE=language)) is None
    assert a1_judged(client) == before.replace("20 judged", "21 judged")
    assert api.get("/api/scorecards/", {"rubric": "care"}).json()["as_of"] is None


@pytest.mark.parametrize("beat", ["never ran", "stopped"])
def test_without_a_beat_keeping_up_a_page_brings_the_rollups_up_to_date_itself(client, supervisor, teams_data, beat):
    scorecard_weeks_refresh_all()
    if beat == "never ran":  # the embedded first run has no beat
        RollupClock.objects.all().delete()
    else:  # its last pass started more than three intervals ago (QA_ROLLUP_REFRESH_INTERVAL is 60 s)
        RollupClock.objects.update(started_at=timezone.now() - timedelta(seconds=181))
    client.force_login(supervisor)
    before = a1_judged(client)
    late = call(teams_data, "a1", "north", {"c1": 1})

    response = client.get(SCORECARD, HTTP_ACCEPT_LANGUAGE="en")
    assert note_of(response) is None
    assert a1_judged(client) == before.replace("20 judged", "21 judged")
    assert not Recording.objects.get(pk=late.pk).rollup_stale


def test_a_beat_two_minutes_old_is_still_keeping_up(teams_data):
    scorecard_weeks_refresh_all()
    RollupClock.objects.update(started_at=timezone.now() - timedelta(seconds=170))
    call(teams_data, "a1", "north", {"c1": 1})
    assert freshness.rollups_as_of(rubric=teams_data).behind == 1


def test_with_too_many_changes_for_a_read_the_page_reads_the_calls_and_says_nothing(
    client, supervisor, teams_data, monkeypatch
):
    scorecard_weeks_refresh_all()
    client.force_login(supervisor)
    before = a1_judged(client)
    call(teams_data, "a1", "north", {"c1": 1})
    monkeypatch.setattr(freshness, "REFRESH_IN_READ_MAX", 0)  # one changed call is already too many

    assert note_of(client.get(SCORECARD, HTTP_ACCEPT_LANGUAGE="en")) is None
    assert a1_judged(client) == before.replace("20 judged", "21 judged")  # from the calls themselves


def test_the_clock_only_moves_on(teams_data, monkeypatch):
    """A slow pass that finishes after a later one does not set the clock back."""
    scorecard_weeks_refresh_all()
    later = RollupClock.objects.get().started_at
    earlier = later - timedelta(seconds=30)
    monkeypatch.setattr(timezone, "now", lambda: earlier)
    scorecard_weeks_refresh_all()
    assert RollupClock.objects.get().started_at == later
    monkeypatch.setattr(timezone, "now", lambda: later + timedelta(seconds=60))
    scorecard_weeks_refresh_all()
    assert RollupClock.objects.get().started_at == later + timedelta(seconds=60)
