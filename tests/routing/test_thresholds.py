"""The certified thresholds: computed from the random audit's pairs only (routing.services), frozen per day, per
rubric version, judge, model and prompt version; and the judging's routing by them (qa.routing)."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest
from django.utils import timezone

from qa.execution import judge_run_execute
from qa.judging import recording_enqueue_judging
from qa.models import CertifiedThreshold, JudgeRun, Recording
from qa.routing import certified_thresholds, certified_thresholds_forget, recording_route, review_reasons
from reviews.services import CriterionAdjustment, review_create
from routing.selectors import Judgments, audited_pairs, routing_table
from routing.services import thresholds_certify
from rubrics.models import Rubric
from tests.factories import JudgeRunFactory, RecordingFactory, ScoreFactory, published_rubric
from tests.judge.conftest import fake_llm, judge_rubric  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db
TODAY = datetime.date(2026, 12, 3)


def reviewed_call(rubric: Rubric, *, confidence: dict[str, float], human: dict[str, int], reasons: list[str],
                  prompt_version: str = "test") -> Recording:  # fmt: skip
    """A judged call routed for `reasons`, every criterion valued 4 at its confidence, reviewed by a supervisor who
    gave `human` (approving where every value is the judge's, rejecting with every value given otherwise)."""
    recording = RecordingFactory(rubric=rubric, status=Recording.Status.IN_REVIEW, review_reasons=reasons, needs_review=True)
    run = JudgeRunFactory(recording=recording, prompt_version=prompt_version)
    for criterion in rubric.criteria.all():
        ScoreFactory(run=run, criterion=criterion, value=4, confidence=confidence[criterion.key])
    Recording.objects.filter(pk=recording.pk).update(current_run=run)
    recording.refresh_from_db()
    # A reject gives a human value only where it sets one (reviews.reference), so it sets every criterion's.
    changed = [
        CriterionAdjustment(criterion_key=key, adjusted_value=value, comment="heard otherwise")
        for key, value in human.items()
    ] if any(value != 4 for value in human.values()) else []  # fmt: skip
    review_create(
        recording=recording, decision="reject" if changed else "approve", reviewer="sup", criteria=changed,
        comment="checked",
    )  # fmt: skip
    return recording


@pytest.fixture
def rubric():
    return published_rubric(criteria=2)


def audited(rubric, n, *, c1_disagree=(), c2_disagree=(), start=0.99, reasons=("random_audit",), **kwargs):
    """n audited calls, c1's confidence falling from `start` by 0.01, c2 always 0.9; the supervisor gives 2 where
    the call's index is listed."""
    for index in range(n):
        reviewed_call(
            rubric,
            confidence={"c1": round(start - 0.01 * index, 2), "c2": 0.9},
            human={"c1": 2 if index in c1_disagree else 4, "c2": 2 if index in c2_disagree else 4},
            reasons=list(reasons),
            **kwargs,
        )


def rows_of(rubric, day=TODAY) -> dict[str, CertifiedThreshold]:
    return {row.criterion.key: row for row in CertifiedThreshold.objects.filter(rubric=rubric, day=day)}


def test_the_audit_certifies_from_its_pairs_only(rubric):
    # 30 audited calls: c1 all agree (confidences 0.99 … 0.70), c2 disagrees on three of 30 (all at 0.9).
    audited(rubric, 30, c2_disagree={3, 10, 20})
    # Flagged calls are not a fair sample: 10 low-confidence calls where the supervisor disagreed on c1 count for nothing.
    audited(rubric, 10, c1_disagree=set(range(10)), start=0.98, reasons=("low_confidence",))
    # Nor does a call the audit drew that is also flagged lose its place: it still counts (here one more agreeing pair).
    audited(rubric, 1, start=0.5, reasons=("low_confidence", "random_audit"))

    assert thresholds_certify(day=TODAY) == 2
    rows = rows_of(rubric)
    c1, c2 = rows["c1"], rows["c2"]
    # c1: 31 pairs all agreeing, every step passes: the lowest confidence, 0.5, bound 0.1^(1/31).
    assert (c1.pairs, c1.kept, c1.agreeing, c1.threshold) == (31, 31, 31, 0.5)
    assert c1.lower_bound == pytest.approx(0.1 ** (1 / 31)) and c1.coverage == 1.0
    # c2: every pair at 0.9 (and one at 0.9 from the last call): one step, 28 of 31, bound below 0.9: uncertified.
    assert (c2.pairs, c2.agreeing, c2.threshold, c2.lower_bound, c2.more_pairs_needed) == (31, 0, None, None, 0)
    assert (c1.target, c1.risk, c1.tolerance, c1.judge_name, c1.model, c1.prompt_version) == (
        0.9, 0.1, "exact", "", "test-model", "test"
    )  # fmt: skip


def test_within_one_counts_a_point_away_as_agreeing(rubric):
    Rubric.objects.filter(pk=rubric.pk).update(agreement_tolerance="within_one")
    for index in range(25):  # the supervisor says 3 where the judge said 4: exact disagrees, within one agrees
        reviewed_call(rubric, confidence={"c1": 0.9, "c2": 0.9}, human={"c1": 3, "c2": 4}, reasons=["random_audit"])
    thresholds_certify(day=TODAY)
    assert rows_of(rubric)["c1"].threshold == 0.9 and rows_of(rubric)["c1"].agreeing == 25

    pairs = audited_pairs(
        judgments=Judgments(rubric_id=rubric.pk, judge_name="", model="test-model", prompt_version="test"),
        within_one=False,
    )
    assert sum(agreed for _, agreed in pairs[rubric.criteria.get(key="c1").pk]) == 0


def test_too_few_audits_keep_the_fixed_threshold_and_say_how_many_more(rubric):
    audited(rubric, 10)
    thresholds_certify(day=TODAY)
    row = rows_of(rubric)["c1"]
    assert row.threshold is None and row.pairs == 10 and row.more_pairs_needed == 12
    table = routing_table(rubric=rubric)
    line = next(line for line in table.rows if line.key == "c1")
    assert not line.certified and line.threshold == 0.75 and line.more_pairs_needed == 12 and line.coverage is None


def test_a_day_is_frozen_and_the_next_day_recomputes(rubric):
    audited(rubric, 25)
    thresholds_certify(day=TODAY)
    assert rows_of(rubric)["c1"].threshold == 0.75
    audited(rubric, 5, c1_disagree=set(range(5)), start=0.99)  # five high-confidence disagreements
    assert thresholds_certify(day=TODAY) == 0
    assert rows_of(rubric)["c1"].threshold == 0.75 and rows_of(rubric)["c1"].pairs == 25
    thresholds_certify(day=TODAY + datetime.timedelta(days=1))
    assert rows_of(rubric, TODAY + datetime.timedelta(days=1))["c1"].threshold is None


def test_a_new_prompt_version_starts_uncertified(rubric):
    audited(rubric, 25)
    # One call judged with a new prompt: its own judgments, with no audit yet.
    reviewed_call(rubric, confidence={"c1": 0.9, "c2": 0.9}, human={"c1": 4, "c2": 4}, reasons=["warm_up"], prompt_version="v2")
    thresholds_certify(day=TODAY)
    rows = CertifiedThreshold.objects.filter(rubric=rubric, criterion__key="c1", day=TODAY)
    assert {row.prompt_version: (row.threshold, row.pairs, row.more_pairs_needed) for row in rows} == {
        "test": (0.75, 25, 0), "v2": (None, 0, 22),
    }  # fmt: skip
    new_run = JudgeRun.objects.filter(prompt_version="v2").get()
    assert certified_thresholds(run=new_run, day=TODAY) == {}
    old_run = JudgeRun.objects.filter(prompt_version="test").first()
    c1, c2 = (rubric.criteria.get(key=key).pk for key in ("c1", "c2"))
    assert certified_thresholds(run=old_run, day=TODAY) == {c1: 0.75, c2: 0.9}
    # Before the day it was certified, nothing was.
    assert certified_thresholds(run=old_run, day=TODAY - datetime.timedelta(days=1)) == {}


def _score(criterion_id: int, confidence: float, verified: bool = True) -> SimpleNamespace:
    return SimpleNamespace(criterion_id=criterion_id, confidence=confidence, evidence_verified=verified, unstable=False)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        # Certified at 0.8: 0.78 is below it, though above the fixed 0.75.
        ([_score(1, 0.78), _score(2, 0.9)], ["below_certified"]),
        # Certified at 0.65: 0.7 skips review, though below the fixed 0.75.
        ([_score(3, 0.7), _score(2, 0.9)], []),
        # Uncertified (2): the fixed threshold.
        ([_score(2, 0.7)], ["low_confidence"]),
        ([_score(2, 0.7), _score(1, 0.79)], ["low_confidence", "below_certified"]),
        # An unverified value is no value: whatever the threshold, it goes for its evidence.
        ([_score(3, 0.0, verified=False)], ["unverified_evidence"]),
    ],
)
def test_routing_by_the_certified_threshold(scores, expected):
    recording = SimpleNamespace(source="crm", external_id="call-1", speakers_known=True, transcript="AGENT: Hello.\n")
    rubric = SimpleNamespace(slug="s", version=1, review_confidence_threshold=0.75, audit_rate=0.0, route_auto_fail=False)
    certified = {1: 0.8, 3: 0.65}
    assert review_reasons(recording=recording, rubric=rubric, scores=scores, certified=certified) == expected


def test_the_judging_routes_by_the_day_s_certificate(fake_llm):  # noqa: F811
    """End to end through the real judging (the fake server answers every criterion at 0.95): with no certificate a
    call skips review; once `saludo` is certified at 0.97 the next call goes to review as below_certified, and a
    call routed again later is routed by the certificate of its run's day, not today's."""
    rubric = judge_rubric()
    first = RecordingFactory(rubric=rubric)
    judge_run_execute(run_id=recording_enqueue_judging(recording=first).pk)
    first.refresh_from_db()
    assert first.review_reasons == [] and first.status == Recording.Status.JUDGED

    run = first.current_run
    today = timezone.localdate()
    for key, threshold in (("saludo", 0.97), ("compromiso", 0.5)):
        CertifiedThreshold.objects.create(
            rubric=rubric, criterion=rubric.criteria.get(key=key), judge_name="", model=run.model,
            prompt_version=run.prompt_version, day=today, threshold=threshold, target=0.9, risk=0.1, tolerance="exact",
            pairs=40, kept=30, agreeing=30, lower_bound=0.93, coverage=0.75, more_pairs_needed=0,
        )  # fmt: skip
    certified_thresholds_forget()  # as a minute later: a process keeps a day without a certificate for a minute
    second = RecordingFactory(rubric=rubric)
    judge_run_execute(run_id=recording_enqueue_judging(recording=second).pk)
    second.refresh_from_db()
    assert second.review_reasons == ["below_certified"] and second.status == Recording.Status.IN_REVIEW

    # The first call's run finished yesterday, before the certificate: routed again, it stays as it was.
    JudgeRun.objects.filter(pk=run.pk).update(finished_at=timezone.now() - datetime.timedelta(days=1))
    run.refresh_from_db()
    assert recording_route(recording=first, run=run, scores=list(run.scores.all())) is True
    first.refresh_from_db()
    assert first.review_reasons == []
