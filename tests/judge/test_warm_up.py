"""The warm-up: the first judgments of a new rubric version, prompt version or
judge model all go to review, then routing returns to the threshold and the audit."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from qa.execution import judge_run_execute
from qa.judging import recording_enqueue_judging
from qa.redaction.services import recording_redact
from qa.models import JudgeRun, Recording
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric

pytestmark = pytest.mark.django_db


def judge(recordings: list[Recording]) -> list[Recording]:
    """Judge each in turn, in this process; the fake LLM quotes verbatim with high confidence."""
    for recording in recordings:
        run = recording_enqueue_judging(recording=recording)
        judge_run_execute(run_id=run.pk)
    return list(Recording.objects.filter(pk__in=[r.pk for r in recordings]).order_by("pk"))


def test_the_50th_judgment_is_warm_up_and_the_51st_is_not(fake_llm):
    rubric = judge_rubric(warm_up_judgments=50)

    recordings = judge([RecordingFactory(rubric=rubric) for _ in range(51)])

    *first_fifty, fifty_first = recordings
    assert [r.review_reasons for r in first_fifty] == [["warm_up"]] * 50
    assert all(r.status == Recording.Status.IN_REVIEW and r.needs_review for r in first_fifty)
    assert fifty_first.review_reasons == []
    assert fifty_first.status == Recording.Status.JUDGED
    assert JudgeRun.objects.filter(warm_up=True).count() == 50


def test_a_new_rubric_version_or_model_starts_a_new_warm_up(fake_llm, settings):
    first = judge_rubric(warm_up_judgments=2)
    assert [r.review_reasons for r in judge([RecordingFactory(rubric=first) for _ in range(3)])] == [
        ["warm_up"], ["warm_up"], []
    ]

    settings.QA_JUDGE_MODEL = "another-judge"
    assert [r.review_reasons for r in judge([RecordingFactory(rubric=first) for _ in range(3)])] == [
        ["warm_up"], ["warm_up"], []
    ]

    second = rubric_publish(rubric=rubric_new_version(rubric=first))
    assert second.warm_up_judgments == 2
    assert [r.review_reasons for r in judge([RecordingFactory(rubric=second) for _ in range(3)])] == [
        ["warm_up"], ["warm_up"], []
    ]


def test_a_rejudged_recording_counts_as_a_judgment(fake_llm):
    rubric = judge_rubric(warm_up_judgments=1)
    recording = RecordingFactory(rubric=rubric)

    assert judge([recording])[0].review_reasons == ["warm_up"]
    assert judge([recording])[0].review_reasons == []


def test_no_warm_up_when_set_to_zero(fake_llm):
    rubric = judge_rubric(warm_up_judgments=0)

    assert judge([RecordingFactory(rubric=rubric)])[0].review_reasons == []


def test_once_the_warm_up_is_over_a_judgment_takes_six_statements_and_no_lock_on_the_rubric(fake_llm, settings):
    # Which webhook events anyone subscribed to is kept for a second in production (the test settings
    # read it every time): kept here too, as the judgments below read it first.
    settings.QA_WEBHOOK_SUBSCRIPTIONS_TTL = 3600
    from webhooks.selectors import events_wanted_forget

    events_wanted_forget()  # nothing another test left in this process's copy
    rubric = judge_rubric(warm_up_judgments=1)
    judge([RecordingFactory(rubric=rubric) for _ in range(2)])  # the second finds the warm-up over
    run = recording_enqueue_judging(recording=RecordingFactory(rubric=rubric))
    recording_redact(recording_id=run.recording_id)  # once per recording, before its first judgment

    with CaptureQueriesContext(connection) as queries:
        judge_run_execute(run_id=run.pk)

    statements = [
        query["sql"] for query in queries.captured_queries if query["sql"].startswith(("SELECT", "UPDATE", "INSERT"))
    ]
    # Read the run; claim it and mark the recording; mark it succeeded, insert the scores, route the recording.
    # (The certified routing thresholds were read by the judgments before: a process keeps them.)
    assert [sql.split()[0] for sql in statements] == ["SELECT", "UPDATE", "UPDATE", "UPDATE", "INSERT", "UPDATE"]
    assert not any("FOR UPDATE" in sql for sql in statements)
    assert Recording.objects.get(pk=run.recording_id).review_reasons == []
