"""The per-call values the scorecards read instead of the scores: who writes them, and that the page,
the API and an agent's page make as many queries for many agents as for a few."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from qa.execution import judge_run_execute
from qa.judging import recording_enqueue_judging
from qa.models import Recording, values_by_key
from qa.services import recordings_current_values_store
from reviews.models import Review
from reviews.reference import review_values
from reviews.services import CriterionAdjustment, review_create, reviews_human_values_store
from tests.factories import RecordingFactory, judged_recording, published_rubric
from rubrics.selectors import rubric_quality_policy
from tests.judge.conftest import fake_llm, judge_rubric  # noqa: F401 (a fixture)
from tests.reports.conftest import AUDIT
from tests.scorecards.conftest import call

pytestmark = pytest.mark.django_db


def test_judging_stores_the_current_runs_values_with_it(fake_llm):  # noqa: F811
    recording = RecordingFactory(rubric=judge_rubric())
    for _ in range(2):  # judged, then judged again: the values follow the current run
        judge_run_execute(run_id=recording_enqueue_judging(recording=recording).pk)
        recording.refresh_from_db()
        scores = list(recording.current_run.scores.select_related("criterion"))
        assert recording.current_values == {score.criterion.key: score.value for score in scores}
        assert recording.current_values and all(isinstance(value, int) for value in recording.current_values.values())

    # What the migration and the benchmarks fill for recordings written otherwise is the same.
    Recording.objects.filter(pk=recording.pk).update(current_values=None)
    assert recordings_current_values_store(recordings=Recording.objects.all()) == 1
    recording.refresh_from_db()
    assert recording.current_values == values_by_key(scores)


def test_a_review_stores_its_human_values_by_the_human_reference_rule(supervisor):
    rubric = published_rubric(criteria=3, not_applicable=("c3",))
    recording = judged_recording(rubric=rubric, values={"c1": 4, "c2": 2, "c3": 5})
    review = review_create(
        recording=recording,
        decision=Review.Decision.APPROVE,
        reviewer="sup",
        user=supervisor,
        criteria=[
            CriterionAdjustment("c2", adjusted_value=3, comment="two greetings"),
            CriterionAdjustment("c3", not_applicable=True, comment="no sale"),
        ],
    )
    # c1 approved as judged; c2 the supervisor's value; c3 "does not apply": no number, left out.
    review.refresh_from_db()
    assert review.human_values == {"c1": 4, "c2": 3}
    assert review.human_values == {
        row["key"]: row["human"] for row in review_values(reviews=Review.objects.all()) if row["human"] is not None
    }

    Review.objects.update(human_values=None)
    assert reviews_human_values_store(reviews=Review.objects.all()) == 1
    review.refresh_from_db()
    assert review.human_values == {"c1": 4, "c2": 3}


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200, url
    return len(captured)


URLS = ("/scorecards/?rubric=care", "/api/scorecards/?rubric=care&group=agent", "/scorecards/agent/?rubric=care&agent=a1")


def test_the_page_the_api_and_an_agents_page_make_as_many_queries_for_many_agents(client, supervisor, teams_data):
    client.force_login(supervisor)
    rubric_quality_policy(teams_data)  # a published version's quality policy is read once per process
    few = {url: queries(client, url) for url in URLS}
    for index in range(20):
        for _ in range(2):
            call(teams_data, f"new-{index}", f"team-{index % 4}", {"c1": 3}, reasons=(AUDIT,), human={"c1": 2})
    many = {url: queries(client, url) for url in URLS}
    assert len(client.get(URLS[1]).json()["rows"]) == 3 + 20  # a1..a3 and the new agents
    assert many == few
