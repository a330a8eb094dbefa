"""A key acts for one system (issue 26: "keys act for any system"). The probe's key listed and read
every source's recordings, rejudged any of them and posted under another system's source, so that
system's real external_id then got a 409."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from access.models import ApiKey, default_workspace_id
from qa.models import JudgeRun, Recording
from tests.api.conftest import key_client, new_key
from tests.factories import SAMPLE_TRANSCRIPT, RecordingFactory, published_rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def rubric(db):
    return published_rubric()


@pytest.fixture
def calls(rubric) -> dict[str, Recording]:
    """One judged call of each system: the CRM's and the dialer's."""
    return {
        source: RecordingFactory(rubric=rubric, source=source, external_id="call-1", status=Recording.Status.JUDGED)
        for source in ("crm", "dialer")
    }


def post(client, rubric, **fields):
    body = {"external_id": "call-9", "rubric": rubric.slug, "transcript": SAMPLE_TRANSCRIPT, **fields}
    return client.post("/api/recordings/", body, format="json")


def test_a_key_reads_and_lists_only_its_sources_recordings(calls):
    crm = key_client(new_key("crm-key", source="crm")[1])

    listed = crm.get("/api/recordings/").json()["results"]
    assert [(item["source"], item["external_id"]) for item in listed] == [("crm", "call-1")]
    assert crm.get("/api/recordings/?source=dialer").json()["results"] == []
    assert crm.get(f"/api/recordings/{calls['crm'].pk}/").status_code == 200
    other = crm.get(f"/api/recordings/{calls['dialer'].pk}/")
    assert other.status_code == 404 and "call-1" not in other.content.decode()


def test_a_key_rejudges_and_reviews_only_its_sources_recordings(calls, django_capture_on_commit_callbacks):
    crm = key_client(new_key("crm-key", source="crm", can_review=True)[1])

    with django_capture_on_commit_callbacks():
        assert crm.post(f"/api/recordings/{calls['dialer'].pk}/rejudge/").status_code == 404
        review = {"reviewer": "sup", "decision": "approve"}
        assert crm.post(f"/api/recordings/{calls['dialer'].pk}/review/", review, format="json").status_code == 404
        assert not JudgeRun.objects.filter(recording=calls["dialer"]).exists()
        assert crm.post(f"/api/recordings/{calls['crm'].pk}/rejudge/").status_code == 202


def test_a_key_posts_only_under_its_source_and_cannot_take_another_systems_external_id(
    rubric, calls, django_capture_on_commit_callbacks
):
    crm = key_client(new_key("crm-key", source="crm")[1])
    dialer = key_client(new_key("dialer-key", source="dialer")[1])

    with django_capture_on_commit_callbacks():
        refused = post(crm, rubric, source="dialer", external_id="call-2")
        batch = crm.post(
            "/api/recordings/batch/",
            {"recordings": [{"external_id": "call-2", "rubric": rubric.slug, "transcript": SAMPLE_TRANSCRIPT,
                             "source": "dialer"},
                            {"external_id": "call-3", "rubric": rubric.slug, "transcript": SAMPLE_TRANSCRIPT}]},
            format="json",
        )
        own = post(crm, rubric)
        # The dialer's own post of call-2 is then a new recording, not a 409.
        theirs = post(dialer, rubric, external_id="call-2")

    assert refused.status_code == 400
    assert refused.json()["source"] == "This key posts only under the source crm, not dialer."
    results = batch.json()["results"]
    assert results[0]["status"] == 400 and "only under the source crm" in results[0]["errors"]["source"]
    assert results[1]["status"] == 201
    assert own.status_code == 201 and own.json()["source"] == "crm"
    assert theirs.status_code == 201
    assert set(Recording.objects.values_list("source", "external_id")) == {
        ("crm", "call-1"), ("dialer", "call-1"), ("crm", "call-3"), ("crm", "call-9"), ("dialer", "call-2"),
    }


def test_an_all_sources_key_reads_rejudges_and_posts_for_every_source(
    rubric, calls, django_capture_on_commit_callbacks
):
    hub = key_client(new_key("hub", all_sources=True)[1])

    assert {item["source"] for item in hub.get("/api/recordings/").json()["results"]} == {"crm", "dialer"}
    assert hub.get(f"/api/recordings/{calls['dialer'].pk}/").status_code == 200
    with django_capture_on_commit_callbacks():
        assert hub.post(f"/api/recordings/{calls['dialer'].pk}/rejudge/").status_code == 202
        assert post(hub, rubric, source="dialer").json()["source"] == "dialer"
        assert post(hub, rubric, external_id="call-10").json()["source"] == "hub"  # none named: its own


def test_create_api_key_binds_the_source(capsys):
    call_command("create_api_key", "crm-prod", "--source", "crm")
    call_command("create_api_key", "dialer")
    call_command("create_api_key", "hub", "--all-sources")
    err = capsys.readouterr().err

    assert list(ApiKey.objects.values_list("name", "source", "all_sources")) == [
        ("crm-prod", "crm", False), ("dialer", "dialer", False), ("hub", "hub", True),
    ]
    assert "recordings of source 'crm'" in err and "recordings of every source" in err


def test_create_api_key_refuses_a_source_with_control_characters():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--source.*control characters"):
        call_command("create_api_key", "crm", "--source", "crm\r\nX")
    assert not ApiKey.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_keys_made_before_sources_are_all_sources_keys_and_the_admin_says_so(client, django_user_model):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("qa", "0012_job_lease")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        OldApiKey = executor.loader.project_state(before).apps.get_model("qa", "ApiKey")
        prefix, key = ApiKey.generate()
        OldApiKey.objects.create(name="legacy", prefix=prefix, key_hash=ApiKey.hash(key))
    finally:
        # Forward through the source migration to every app's latest: going back to qa 0012 also
        # unapplied what depends on it, which later tests (the workers' among them) need.
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    legacy = ApiKey.objects.get(name="legacy")
    assert (legacy.source, legacy.all_sources) == ("legacy", True)
    assert key_client(key).get("/api/recordings/").status_code == 200  # it keeps working
    new_key("crm-key", source="crm")
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    listing = client.get("/admin/access/apikey/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    row = listing.split("legacy", 1)[1].split("</tr>", 1)[0]
    assert '<td class="field-scope">all sources</td>' in row
    assert '<td class="field-scope">crm</td>' in listing


def test_the_admin_makes_a_key_bound_to_its_source_or_for_all(client, django_user_model, rubric):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    form = {"name": "crm-prod", "workspace": default_workspace_id(), "source": "crm", "expires_at_0": "", "expires_at_1": ""}

    made = client.post("/admin/access/apikey/add/", form, HTTP_ACCEPT_LANGUAGE="en")
    hub = client.post("/admin/access/apikey/add/", {**form, "name": "hub", "source": "", "all_sources": "on"})
    bad = client.post("/admin/access/apikey/add/", {**form, "name": "bad", "source": "crm\x1b[2K"}, HTTP_ACCEPT_LANGUAGE="en")

    assert made.status_code == hub.status_code == 200  # the page showing the key once
    assert list(ApiKey.objects.values_list("name", "source", "all_sources")) == [
        ("crm-prod", "crm", False), ("hub", "hub", True),
    ]
    assert bad.context["adminform"].form.errors["source"] == ["A source has no control characters."]
    key = made.content.decode().split("<code>")[1].split("</code>")[0]
    refused = post(key_client(key), rubric, source="dialer")
    assert refused.json() == {"source": "This key posts only under the source crm, not dialer."}
