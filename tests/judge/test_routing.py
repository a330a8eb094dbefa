from __future__ import annotations

from types import SimpleNamespace

import pytest

from qa.routing import ReviewGroup, audit_draw, group_reasons, review_groups, review_reasons


def test_the_audit_draw_is_reproducible_and_keeps_the_rate():
    draws = [audit_draw(source="crm", external_id=f"call-{n}", rubric_slug="soporte", rubric_version=3) for n in range(20000)]

    assert draws[:50] == [audit_draw(source="crm", external_id=f"call-{n}", rubric_slug="soporte", rubric_version=3) for n in range(50)]
    assert all(0 <= draw < 1 for draw in draws)
    for rate in (0.05, 0.2, 0.5):
        assert sum(draw < rate for draw in draws) / len(draws) == pytest.approx(rate, abs=0.01)
    # A new rubric version is a new draw.
    assert audit_draw(source="crm", external_id="call-0", rubric_slug="soporte", rubric_version=4) != draws[0]


def _score(confidence: float, verified: bool = True, unstable: bool = False) -> SimpleNamespace:
    return SimpleNamespace(confidence=confidence, evidence_verified=verified, unstable=unstable)


@pytest.mark.parametrize(
    ("scores", "audit_rate", "expected"),
    [
        ([_score(0.9), _score(0.8)], 0.0, []),
        ([_score(0.9), _score(0.74)], 0.0, ["low_confidence"]),
        ([_score(0.0, verified=False), _score(0.9)], 0.0, ["unverified_evidence"]),
        # The audit draw is recorded whatever else the call was routed for: it stays a uniform sample.
        ([_score(0.0, verified=False), _score(0.5)], 1.0, ["unverified_evidence", "low_confidence", "random_audit"]),
        ([_score(0.9), _score(0.9)], 1.0, ["random_audit"]),
        ([_score(0.9), _score(0.9, unstable=True)], 1.0, ["unstable", "random_audit"]),
        ([_score(0.5), _score(0.9, unstable=True)], 0.0, ["low_confidence", "unstable"]),
    ],
)
def test_review_reasons(scores, audit_rate, expected):
    recording = SimpleNamespace(source="crm", external_id="call-1", speakers_known=True, transcript="AGENT: Hello.\n")
    rubric = SimpleNamespace(slug="soporte", version=1, review_confidence_threshold=0.75, audit_rate=audit_rate, route_auto_fail=False)

    assert review_reasons(recording=recording, rubric=rubric, scores=scores) == expected


def test_warm_up_is_a_reason_beside_the_others():
    recording = SimpleNamespace(source="crm", external_id="call-1", speakers_known=True, transcript="AGENT: Hello.\n")
    rubric = SimpleNamespace(slug="soporte", version=1, review_confidence_threshold=0.75, audit_rate=1.0, route_auto_fail=False)

    reasons = review_reasons(recording=recording, rubric=rubric, scores=[_score(0.5)], warm_up=True)

    assert reasons == ["low_confidence", "warm_up", "random_audit"]


@pytest.mark.parametrize(
    ("reasons", "groups"),
    [
        ([], set()),
        (["random_audit"], {ReviewGroup.RANDOM_AUDIT}),
        (["warm_up"], {ReviewGroup.WARM_UP}),
        (["low_confidence"], {ReviewGroup.FLAGGED}),
        (["unverified_evidence", "low_confidence", "warm_up", "random_audit"], set(ReviewGroup)),
        # A reason added later (say, by another detector) flags the call unless the routing says otherwise.
        (["unstable"], {ReviewGroup.FLAGGED}),
    ],
)
def test_review_groups(reasons, groups):
    assert review_groups(reasons) == groups


def test_each_reason_is_in_exactly_one_group():
    assert group_reasons(ReviewGroup.RANDOM_AUDIT) == ("random_audit",)
    assert group_reasons(ReviewGroup.WARM_UP) == ("warm_up",)
    assert set(group_reasons(ReviewGroup.FLAGGED)) == {
        "unverified_evidence", "low_confidence", "unknown_speaker", "unstable", "possible_injection", "auto_fail",
        "below_certified",
    }


@pytest.mark.parametrize(("audit_rate", "expected"), [(0.0, ["unknown_speaker"]), (1.0, ["unknown_speaker", "random_audit"])])
def test_unknown_speakers_are_a_flagged_reason(audit_rate, expected):
    recording = SimpleNamespace(source="crm", external_id="call-1", speakers_known=False, transcript="AGENT: Hello.\n")
    rubric = SimpleNamespace(slug="soporte", version=1, review_confidence_threshold=0.75, audit_rate=audit_rate, route_auto_fail=False)

    assert review_reasons(recording=recording, rubric=rubric, scores=[_score(0.9)]) == expected
    assert review_groups(["unknown_speaker"]) == {ReviewGroup.FLAGGED}
