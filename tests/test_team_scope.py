"""A supervisor whose membership names teams reads figures of those teams' calls only, and adds calls only to
them (access.scope: `recordings_q`, `sees_team`, `teams_limit`). The pages and the API are asked as a
supervisor of north beside a QA lead of the whole workspace, over the same calls: north's one, south's two.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from access.models import Role
from access.services import member_add, workspace_create
from qa.models import Recording
from reviews.services import review_create
from tests.factories import SAMPLE_TRANSCRIPT, judged_recording, published_rubric


@pytest.fixture
def acme(db) -> dict:
    workspace = workspace_create(slug="acme", name="Acme")
    rubric = published_rubric(slug="care", name="Care", criteria=1, workspace=workspace)
    for number, team in enumerate(["north", "south", "south"]):
        call = judged_recording(rubric=rubric, team=team, agent_id=f"{team}-agent", external_id=f"call-{number}")
        review_create(recording=call, decision="approve", reviewer="lead")

    def person(name: str, role: str, **extra) -> User:
        user = User.objects.create_user(name, password="pass-word-123", is_staff=True)
        member_add(user=user, workspace=workspace, role=role, **extra)
        return User.objects.get(pk=user.pk)

    return {
        "rubric": rubric,
        "north": person("ana", Role.SUPERVISOR, teams=["north"]),
        "lead": person("luis", Role.QA_LEAD),
    }


def client_of(user: User) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_versions_report_counts_only_the_readers_teams_calls(acme):
    for reader, reviewed in (("north", 1), ("lead", 3)):
        client = client_of(acme[reader])
        body = client.get("/api/reports/versions/?rubric=care").json()
        [criterion] = body["criteria"]
        assert [cell["reviewed"] for cell in criterion["versions"]] == [reviewed], reader
        assert sum(week["reviewed"] for week in body["weeks"]) == reviewed, reader
        page = client.get(reverse("reports:versions") + "?rubric=care")
        [line] = page.context["report"].lines
        assert line.cells[0].agreement.reviewed == reviewed, reader
        csv = client.get(reverse("reports:versions") + "?rubric=care&format=csv")
        row = b"".join(csv.streaming_content if csv.streaming else [csv.content]).decode().splitlines()[1]
        assert row.split(",")[4] == str(reviewed), reader  # the `reviewed` column


@pytest.mark.django_db
def test_the_rubrics_health_in_the_admin_counts_only_the_readers_teams_calls(acme):
    for reader, reviewed in (("north", 1), ("lead", 3)):
        page = client_of(acme[reader]).get(reverse("admin:rubrics_rubric_change", args=[acme["rubric"].pk]))
        [row] = page.context["health"].criteria
        assert row.current.agreement.reviewed == reviewed, reader


@pytest.mark.django_db
def test_the_scorecards_totals_are_of_the_teams_the_reader_sees(acme):
    north = client_of(acme["north"]).get("/scorecards/?rubric=care")
    card = north.context["card"]
    assert {row.team for row in card.rows} == {"north"}
    assert [total.judged_n for total in card.totals] == [1, 1]  # c1 and the overall: north's one call
    assert not card.totals_whole
    assert "Only your teams' calls count here" in north.content.decode()

    lead = client_of(acme["lead"]).get("/scorecards/?rubric=care")
    card = lead.context["card"]
    assert card.totals_whole and [total.judged_n for total in card.totals] == [3, 3]
    assert "Only your teams' calls count here" not in lead.content.decode()


@pytest.mark.django_db
def test_the_dashboards_quality_score_is_the_scorecards_total_of_the_readers_teams(acme):
    for reader, judged in (("north", 1), ("lead", 3)):
        client = client_of(acme[reader])
        board = client.get("/dashboard/?rubric=care").context["board"]
        total = client.get("/scorecards/?rubric=care").context["card"].totals[-1]
        assert (board.quality.judged_n, board.quality.estimate) == (total.judged_n, total.estimate) == (judged, 75.0)
        assert sum(week.judge.n for week in board.weeks) == judged, reader


@pytest.mark.django_db
def test_an_agents_page_counts_only_their_calls_in_the_readers_teams(acme):
    for team in ("north", "south", "south"):  # an agent who moved from north to south
        judged_recording(rubric=acme["rubric"], team=team, agent_id="mover")
    north = client_of(acme["north"]).get("/scorecards/agent/?rubric=care&agent=mover").context["card"]
    assert north.team == "north" and north.criteria[0].agent.judged_n == 1
    lead = client_of(acme["lead"]).get("/scorecards/agent/?rubric=care&agent=mover").context["card"]
    assert lead.team == "south" and lead.criteria[0].agent.judged_n == 3


@pytest.mark.django_db
def test_the_team_limits_words_are_spanish_too(acme):
    client = client_of(acme["north"])
    page = client.get("/scorecards/?rubric=care", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Aquí cuentan solo las llamadas de sus equipos" in page
    refused = poster(acme["north"]).post("/api/recordings/", call("south", "x-es"), format="json", HTTP_ACCEPT_LANGUAGE="es")
    assert refused.json() == {"team": "Solo puede agregar llamadas a sus equipos (north), no al equipo south."}


def poster(user: User) -> APIClient:
    """A person whom the operator let post calls over the API (no role has it of its own)."""
    user.user_permissions.add(Permission.objects.get(codename="add_recording", content_type__app_label="qa"))
    client = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(User.objects.get(pk=user.pk))
    return client


def call(team: str, external_id: str) -> dict:
    return {"external_id": external_id, "rubric": "care", "team": team, "transcript": SAMPLE_TRANSCRIPT}


NOT_YOURS = "You may add calls only to your teams (north), not to team south."
NO_TEAM = "Name the call's team: you may add calls only to your teams (north)."


@pytest.mark.django_db
def test_a_team_limited_supervisor_posts_calls_only_to_their_teams(acme, django_capture_on_commit_callbacks):
    client = poster(acme["north"])
    before = Recording.objects.count()
    refused = client.post("/api/recordings/", call("south", "x-1"), format="json")
    assert (refused.status_code, refused.json()) == (400, {"team": NOT_YOURS})
    unnamed = client.post("/api/recordings/", call("", "x-2"), format="json")
    assert (unnamed.status_code, unnamed.json()) == (400, {"team": NO_TEAM})
    batch = client.post("/api/recordings/batch/", {"recordings": [call("south", "x-3"), call("north", "x-4")]}, format="json")
    refused_item, stored_item = batch.json()["results"]
    assert (refused_item["status"], refused_item["errors"]) == (400, {"team": NOT_YOURS})
    assert stored_item["status"] == 201
    assert Recording.objects.count() == before + 1  # only the north call
    with django_capture_on_commit_callbacks():
        assert client.post("/api/recordings/", call("north", "x-5"), format="json").status_code == 201
    # A workspace-wide role posts to any team.
    with django_capture_on_commit_callbacks():
        assert poster(acme["lead"]).post("/api/recordings/", call("south", "x-6"), format="json").status_code == 201


@pytest.mark.django_db
def test_a_team_limited_supervisor_uploads_calls_only_to_their_teams(acme):
    client = client_of(acme["north"])
    before = Recording.objects.count()
    for team, message in (("south", NOT_YOURS), ("", NO_TEAM)):
        audio = SimpleUploadedFile("call.wav", b"RIFF-not-really-audio", content_type="audio/wav")
        response = client.post(
            reverse("review-upload"), {"audio": audio, "external_id": f"up-{team}", "rubric": "care", "team": team}
        )
        assert response.status_code == 400
        assert response.context["form"].errors["team"] == [message]
    assert Recording.objects.count() == before


def test_a_team_limited_supervisor_sees_no_experiment_a_whole_workspace_one_does(acme):
    from access.scope import scope_for
    from experiments.models import Experiment
    from experiments.selectors import experiments_list

    rubric = acme["rubric"]
    experiment = Experiment.objects.create(workspace_id=rubric.workspace_id, rubric_slug=rubric.slug, recording_ids=[])
    everyone = User.objects.create_user("eva")
    member_add(user=everyone, workspace=rubric.workspace, role=Role.SUPERVISOR)  # no teams: every team
    assert list(experiments_list(scope=scope_for(everyone))) == [experiment]
    assert list(experiments_list(scope=scope_for(acme["lead"]))) == [experiment]
    # An experiment's sample is any team's calls, quotes included: not for a supervisor of north.
    assert list(experiments_list(scope=scope_for(acme["north"]))) == []
