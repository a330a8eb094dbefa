"""Hand-built data for the report tests. Every figure the tests expect is
worked out by hand in the test modules from the tables below."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from qa.models import JudgeRun, Recording
from reviews.models import CriterionReview, Review
from reviews.services import reviews_human_values_store
from rubrics.models import Rubric
from rubrics.services import rubric_publish
from tests.factories import CriterionFactory, JudgeRunFactory, RubricFactory, ScoreFactory, judged_recording

AUDIT = Recording.ReviewReason.RANDOM_AUDIT
LOW = Recording.ReviewReason.LOW_CONFIDENCE
UNVERIFIED = Recording.ReviewReason.UNVERIFIED_EVIDENCE
APPROVE, REJECT, NEEDS_REVIEW = Review.Decision.APPROVE, Review.Decision.REJECT, Review.Decision.NEEDS_REVIEW


def at(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


@pytest.fixture
def care_rubric(db) -> Rubric:
    """c1 on 1–5 and c2 on 0–3, so a criterion's own scale is used."""
    rubric = RubricFactory(slug="care", name="Care")
    CriterionFactory(rubric=rubric, key="c1", title="Greets", description="The agent greets by name.", order=1)
    CriterionFactory(
        rubric=rubric,
        key="c2",
        title="Confirms",
        description="The agent confirms the issue.",
        order=2,
        scale_min=0,
        scale_max=3,
    )
    return rubric_publish(rubric=rubric)


def add_review(
    recording: Recording,
    decision: str,
    *,
    when: datetime,
    run: JudgeRun | None = None,
    entries: dict[str, dict] | None = None,
    comment: str = "",
    adjusted_mean: float | None = None,
) -> Review:
    """A review with explicit time (created_at is auto_now_add, so it is set after)."""
    review = Review.objects.create(
        recording=recording,
        run=run or recording.current_run,
        reviewer="sup",
        decision=decision,
        comment=comment,
        adjusted_mean=adjusted_mean,
    )
    Review.objects.filter(pk=review.pk).update(created_at=when)
    criteria = {criterion.key: criterion for criterion in recording.rubric.criteria.all()}
    for key, fields in (entries or {}).items():
        CriterionReview.objects.create(review=review, criterion=criteria[key], **fields)
    reviews_human_values_store(reviews=Review.objects.filter(pk=review.pk))  # as review_create does,
    Recording.objects.filter(pk=recording.pk).update(rollup_stale=True)  # with the mark for the rollup
    return review


@pytest.fixture
def deviation_data(care_rubric: Rubric) -> dict[str, Recording]:
    """Reviewed recordings, with (model, human, rejected) per criterion:

    name  reasons            decision      c1            c2
    r1    audit              approve       (4, 4, -)     (2, 2, -)
    r2    audit              approve       (3, 2, -)*    (1, 1, -)
    r3    audit + low        reject        (5, 3, R)*    (0, none, R)
    r4    low                approve       (2, 2, -)     (3, none, R)   c2 marked rejected, no value
    r5    unverified         approve       (1, 4, -)*    (2, 2, -)      an earlier review is superseded
    r6    unverified         needs_review  not counted (an earlier approve is superseded)
    r7    none               approve       (5, 5, -)     (3, 1, -)*
    r8    audit              not reviewed
    r9    audit              approve       (3, 3, -)     (1, 1, -)      reviewed run A; run B (5, 3) is current
    * adjusted value; adjusted means: r2 3.0 (model mean 2.0), r7 3.5 (model mean 4.0)
    """

    def judged(values: dict[str, int], reasons: list[str], external_id: str) -> Recording:
        return judged_recording(
            rubric=care_rubric, values=values, review_reasons=reasons, external_id=external_id, occurred_at=at(1, 9)
        )

    r1 = judged({"c1": 4, "c2": 2}, [AUDIT], "r1")
    add_review(r1, APPROVE, when=at(10))
    r2 = judged({"c1": 3, "c2": 1}, [AUDIT], "r2")
    add_review(
        r2, APPROVE, when=at(10), entries={"c1": {"adjusted_value": 2, "comment": "No name used."}}, adjusted_mean=3.0
    )
    r3 = judged({"c1": 5, "c2": 0}, [AUDIT, LOW], "r3")
    add_review(
        r3, REJECT, when=at(10), entries={"c1": {"adjusted_value": 3, "comment": "Half."}}, comment="Wrong call."
    )
    r4 = judged({"c1": 2, "c2": 3}, [LOW], "r4")
    add_review(r4, APPROVE, when=at(10), entries={"c2": {"rejected": True, "comment": "Not applicable."}})
    r5 = judged({"c1": 1, "c2": 2}, [UNVERIFIED], "r5")
    add_review(r5, APPROVE, when=at(10))
    add_review(r5, APPROVE, when=at(11), entries={"c1": {"adjusted_value": 4, "comment": "Greeted after all."}})
    r6 = judged({"c1": 4, "c2": 1}, [UNVERIFIED], "r6")
    add_review(r6, APPROVE, when=at(10))
    add_review(r6, NEEDS_REVIEW, when=at(11))
    r7 = judged({"c1": 5, "c2": 3}, [], "r7")
    add_review(
        r7,
        APPROVE,
        when=at(10),
        entries={"c2": {"adjusted_value": 1, "comment": "Did not confirm."}},
        adjusted_mean=3.5,
    )
    r8 = judged({"c1": 1, "c2": 0}, [AUDIT], "r8")
    r9 = judged({"c1": 3, "c2": 1}, [AUDIT], "r9")
    add_review(r9, APPROVE, when=at(10))
    rejudged = JudgeRunFactory(recording=r9, prompt_version="v2")
    for criterion in care_rubric.criteria.all():
        ScoreFactory(run=rejudged, criterion=criterion, value={"c1": 5, "c2": 3}[criterion.key])
    r9.current_run = rejudged
    r9.save(update_fields=["current_run"])
    return {recording.external_id: recording for recording in (r1, r2, r3, r4, r5, r6, r7, r8, r9)}


@pytest.fixture
def evidence_data(care_rubric: Rubric) -> dict[str, JudgeRun]:
    """Runs with (c1, c2) verification statuses; v = verified:

    run  model/prompt  judged              c1          c2
    a    m1/p1         Mon 2 March (W1)    v           not_found
    b    m1/p1         Wed 4 March (W1)    paraphrase  empty
    c    m1/p2         Mon 9 March (W2)    v           v
    d    m2/p2         Sun 15 March (W2)   v           too_short
    e    m1/p1         failed, W1          paraphrase  -          not counted
    f    another rubric                    not_found   -          not counted
    """
    plan = {
        "a": ("m1", "p1", at(2, 10), JudgeRun.Status.SUCCEEDED, {"c1": "verified", "c2": "not_found"}),
        "b": ("m1", "p1", at(4), JudgeRun.Status.SUCCEEDED, {"c1": "paraphrase", "c2": "empty"}),
        "c": ("m1", "p2", at(9), JudgeRun.Status.SUCCEEDED, {"c1": "verified", "c2": "verified"}),
        "d": ("m2", "p2", at(15, 23), JudgeRun.Status.SUCCEEDED, {"c1": "verified", "c2": "too_short"}),
        "e": ("m1", "p1", at(3), JudgeRun.Status.FAILED, {"c1": "paraphrase"}),
    }
    criteria = {criterion.key: criterion for criterion in care_rubric.criteria.all()}
    runs: dict[str, JudgeRun] = {}
    for name, (model, prompt_version, when, status, statuses) in plan.items():
        run = JudgeRunFactory(recording__rubric=care_rubric, model=model, prompt_version=prompt_version, status=status)
        JudgeRun.objects.filter(pk=run.pk).update(created_at=when)
        for key, verification in statuses.items():
            ScoreFactory(
                run=run,
                criterion=criteria[key],
                evidence=f"quote {name} {key}",
                evidence_verified=verification == "verified",
                verification_status=verification,
            )
        runs[name] = run
    other = JudgeRunFactory()
    JudgeRun.objects.filter(pk=other.pk).update(created_at=at(2))
    ScoreFactory(
        run=other, criterion=other.rubric.criteria.first(), evidence_verified=False, verification_status="not_found"
    )
    runs["f"] = other
    return runs
