from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from qa.models import JudgeRun, Recording
from reviews.services import CriterionAdjustment, review_create
from rubrics.models import Rubric
from rubrics.services import rubric_new_version, rubric_publish
from rubrics.selectors import rubric_quality_policy
from tests.factories import (
    CriterionExceptionFactory,
    CriterionFactory,
    JudgeRunFactory,
    RecordingFactory,
    RubricFactory,
    ScoreFactory,
    judged_recording,
    published_rubric,
)


def detail_url(recording: Recording) -> str:
    return f"/api/recordings/{recording.pk}/"


@pytest.mark.django_db
def test_detail_shows_scores_with_their_verification_and_the_latest_run(api):
    recording = judged_recording(values={"c1": 4, "c2": 2, "c3": 5})
    score = recording.current_run.scores.get(criterion__key="c2")
    score.evidence_verified = False
    score.confidence = 0.0
    score.verification_status = "paraphrase"
    score.verification_spans = [[10, 30]]
    score.save()
    Recording.objects.filter(pk=recording.pk).update(needs_review=True, review_reasons=["unverified_evidence"])

    body = api.get(detail_url(recording)).json()

    assert body["status"] == "judged"
    assert (body["rubric"], body["rubric_version"]) == (recording.rubric.slug, recording.rubric.version)
    assert body["latest_run"]["id"] == recording.current_run_id
    assert body["latest_run"]["status"] == "succeeded"
    assert {"backend", "model", "prompt_version", "error"} <= set(body["latest_run"])
    assert [s["criterion_key"] for s in body["scores"]] == ["c1", "c2", "c3"]
    c2 = body["scores"][1]
    assert set(c2) == {
        "criterion_key", "value", "confidence", "model_confidence", "evidence",
        "evidence_verified", "verification", "rationale", "evidence_refs",
    }  # fmt: skip
    assert c2["evidence_verified"] is False
    assert c2["verification"] == {
        "status": "paraphrase", "spans": [[10, 30]], "fragments": [{"start": 10, "end": 30, "start_ms": None, "end_ms": None}]
    }  # fmt: skip
    assert body["needs_review"] is True and body["review_reasons"] == ["unverified_evidence"]
    assert body["transcript"] == recording.transcript
    assert body["reviews"] == []


@pytest.mark.django_db
def test_a_failed_rejudge_shows_as_the_latest_run_but_its_scores_never_do(api):
    recording = judged_recording()
    failed = JudgeRunFactory(recording=recording, status=JudgeRun.Status.FAILED, error="model returned no JSON")
    ScoreFactory(run=failed, criterion=recording.rubric.criteria.first(), value=1)

    body = api.get(detail_url(recording)).json()

    assert body["latest_run"]["id"] == failed.pk
    assert body["latest_run"]["error"] == "model returned no JSON"
    assert all(score["value"] == 4 for score in body["scores"]) and len(body["scores"]) == 3


@pytest.mark.django_db
def test_status_is_visible_while_judging(api):
    recording = RecordingFactory(status=Recording.Status.JUDGING)
    JudgeRunFactory(recording=recording, status=JudgeRun.Status.RUNNING)
    body = api.get(detail_url(recording)).json()
    assert (body["status"], body["latest_run"]["status"], body["scores"]) == ("judging", "running", [])


@pytest.mark.django_db
def test_detail_lists_the_reviews(api, supervisor):
    recording = judged_recording(values={"c1": 4})
    review_create(
        recording=recording,
        decision="approve",
        reviewer="supervisor-1",
        user=supervisor,
        criteria=[CriterionAdjustment("c1", adjusted_value=3, comment="Partly")],
    )
    [review] = api.get(detail_url(recording)).json()["reviews"]
    assert (review["reviewer"], review["decision"], review["api_key"]) == ("supervisor-1", "approve", None)
    assert review["criteria"] == [
        {"criterion_key": "c1", "adjusted_value": 3, "not_applicable": False, "rejected": False, "comment": "Partly"}
    ]


@pytest.mark.django_db
def test_an_unknown_recording_is_a_404(api):
    response = api.get("/api/recordings/999999/")
    assert response.status_code == 404
    assert response.json()["detail"]


def _queries(api, url: str) -> int:
    with CaptureQueriesContext(connection) as context:
        assert api.get(url).status_code == 200
    return len(context)


@pytest.mark.django_db
def test_detail_query_count_does_not_grow_with_scores_or_reviews(api, supervisor):
    small = judged_recording(rubric=published_rubric(criteria=1))
    large = judged_recording(rubric=published_rubric(criteria=12))
    for _ in range(3):
        review_create(
            recording=large,
            decision="needs_review",
            reviewer="s",
            user=supervisor,
            criteria=[CriterionAdjustment("c1", adjusted_value=3, comment="x"), CriterionAdjustment("c2")],
        )
    review_create(recording=small, decision="approve", reviewer="s", user=supervisor)
    # Each has a latest final review, whose quality score is one query whatever its size.
    review_create(recording=large, decision="approve", reviewer="s", user=supervisor)
    JudgeRunFactory(recording=large, status=JudgeRun.Status.FAILED)
    for recording in (small, large):  # a published version's quality policy is read once per process
        rubric_quality_policy(recording.rubric)

    assert _queries(api, detail_url(small)) == _queries(api, detail_url(large))


@pytest.mark.django_db
def test_list_query_count_does_not_grow_with_recordings(api):
    rubric = published_rubric()
    RecordingFactory(rubric=rubric)
    one = _queries(api, "/api/recordings/")
    RecordingFactory.create_batch(19, rubric=rubric)
    RecordingFactory.create_batch(5)  # other rubrics too
    assert _queries(api, "/api/recordings/") == one


@pytest.mark.django_db
def test_list_is_paginated_newest_first(api):
    rubric = published_rubric()
    recordings = RecordingFactory.create_batch(3, rubric=rubric)
    body = api.get("/api/recordings/?page_size=2").json()
    assert body["count"] == 3
    assert [r["id"] for r in body["results"]] == [recordings[2].pk, recordings[1].pk]
    assert body["next"]
    assert "transcript" not in body["results"][0]


@pytest.mark.django_db
def test_list_filters(api):
    support = published_rubric(slug="support")
    sales = published_rubric(slug="sales")
    day = datetime(2026, 1, 5, 12, tzinfo=UTC)
    matching = {
        "rubric": support,
        "agent_id": "a-1",
        "team": "billing",
        "status": Recording.Status.JUDGED,
        "needs_review": True,
        "occurred_at": day,
    }
    target = RecordingFactory(**matching)
    # Each decoy differs from the target in one filtered field only.
    for change in [
        {"rubric": sales},
        {"agent_id": "a-2"},
        {"team": "sales"},
        {"status": Recording.Status.QUEUED},
        {"needs_review": False},
        {"occurred_at": datetime(2026, 2, 1, tzinfo=UTC)},
    ]:
        RecordingFactory(**{**matching, **change})

    query = (
        "status=judged&rubric=support&agent=a-1&team=billing&needs_review=true"
        "&occurred_after=2026-01-01T00:00:00Z&occurred_before=2026-01-31T00:00:00Z"
    )
    body = api.get(f"/api/recordings/?{query}").json()
    assert [r["id"] for r in body["results"]] == [target.pk]
    assert api.get(f"/api/recordings/?external_id={target.external_id}&source=test").json()["count"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query", ["status=done", "needs_review=perhaps", "occurred_after=yesterday", "page_size=x", "page_size=0", "page_size=201", "rubric=not a slug"]
)
def test_bad_filters_are_a_400_on_their_field(api, query):
    response = api.get(f"/api/recordings/?{query}")
    assert response.status_code == 400
    assert list(response.json()) == [query.split("=")[0]]


@pytest.mark.django_db
def test_rubrics_list_the_version_new_recordings_get(api):
    first = published_rubric(slug="support", name="Support")
    rubric_publish(rubric=rubric_new_version(rubric=first))
    rubric_new_version(rubric=Rubric.objects.get(slug="support", version=2))  # a draft v3 is not listed
    published_rubric(slug="sales")
    body = api.get("/api/rubrics/").json()
    assert [(r["slug"], r["version"], r["status"]) for r in body["results"]] == [
        ("sales", 1, "published"),
        ("support", 2, "published"),
    ]
    assert set(body["results"][0]) >= {"slug", "name", "language", "version", "status"}


def rubric_with_exceptions(*, slug: str, criteria: int) -> Rubric:
    """A published rubric whose criteria c1..cN each have one exception."""
    draft = RubricFactory(slug=slug)
    for index in range(1, criteria + 1):
        criterion = CriterionFactory(rubric=draft, key=f"c{index}", order=index)
        CriterionExceptionFactory(criterion=criterion, text="Transferred", outcome="not_applicable")
    return rubric_publish(rubric=draft)


@pytest.mark.django_db
def test_rubric_detail_has_criteria_exceptions_and_versions(api):
    first = rubric_with_exceptions(slug="support", criteria=3)
    second = rubric_publish(rubric=rubric_new_version(rubric=first))

    body = api.get("/api/rubrics/support/").json()

    assert body["version"] == second.version
    assert [c["key"] for c in body["criteria"]] == ["c1", "c2", "c3"]
    c1 = body["criteria"][0]
    assert set(c1) == {
        "key", "title", "description", "evidence_guidance", "scale_min", "scale_max", "weight", "replaces", "subject",
        "section", "critical", "fail_at", "exceptions",
    }  # fmt: skip
    assert c1["subject"] == "any"
    assert c1["exceptions"] == [{"text": "Transferred", "outcome": "not_applicable"}]
    assert [(v["version"], v["status"]) for v in body["versions"]] == [(2, "published"), (1, "archived")]
    assert api.get("/api/rubrics/support/?version=1").json()["status"] == "archived"


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/rubrics/nope/", "/api/rubrics/support/?version=9"])
def test_unknown_rubrics_are_a_404(api, url):
    published_rubric(slug="support")
    assert api.get(url).status_code == 404


@pytest.mark.django_db
def test_rubric_detail_query_count_does_not_grow_with_criteria(api):
    rubric_with_exceptions(slug="small", criteria=1)
    rubric_with_exceptions(slug="large", criteria=12)
    assert _queries(api, "/api/rubrics/small/") == _queries(api, "/api/rubrics/large/")


@pytest.mark.django_db
def test_rejudge_enqueues_a_new_run_and_keeps_the_old(api, django_capture_on_commit_callbacks):
    recording = judged_recording()
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post(f"/api/recordings/{recording.pk}/rejudge/")
    assert response.status_code == 202
    assert response.json()["status"] == "pending"
    assert recording.runs.count() == 2
    assert len(callbacks) == 1


@pytest.mark.django_db
def test_rejudge_while_a_run_is_active_is_a_conflict(api, django_capture_on_commit_callbacks):
    recording = RecordingFactory()
    active = JudgeRunFactory(recording=recording, status=JudgeRun.Status.RUNNING)
    with django_capture_on_commit_callbacks():
        response = api.post(f"/api/recordings/{recording.pk}/rejudge/")
    assert response.status_code == 409
    assert response.json()["run"]["id"] == active.pk
    assert recording.runs.count() == 1


@pytest.mark.django_db
def test_rejudge_of_an_unknown_recording_is_a_404(api):
    assert api.post("/api/recordings/999999/rejudge/").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path", ["/api/recordings/abc/", "/api/nope", "/api/rubrics/a%0Ab/", "/recordings/null%2Cnull/review"]
)
def test_unknown_api_urls_are_a_json_404(api, path):
    response = api.post(path) if path in ("/api/nope", "/recordings/null%2Cnull/review") else api.get(path)
    assert response.status_code == 404
    assert response.json()["detail"]
