"""GET /api/reports/...: the same figures as the pages, 400 naming a bad filter."""

from __future__ import annotations

from fractions import Fraction

import pytest
from rest_framework.test import APIClient

from access.models import ApiKey
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(supervisor) -> APIClient:
    client = APIClient()
    client.force_authenticate(supervisor)
    return client


def test_deviation_groups_are_keyed_and_never_mixed(api, care_rubric, deviation_data):
    body = api.get("/api/reports/deviation/", {"rubric": "care"}).json()
    assert body["rubric"] == {"slug": "care", "version": 1, "name": "Care"}
    assert list(body["groups"]) == ["random_audit", "warm_up", "flagged", "all"]
    assert body["groups"]["warm_up"]["recordings"] == 0
    by_group = {
        group: {row["criterion_key"]: row for row in data["criteria"]} for group, data in body["groups"].items()
    }
    audit_c1 = dict(by_group["random_audit"]["c1"])
    verified, unverified = audit_c1.pop("verified"), audit_c1.pop("unverified")
    # Every quote of this data verified: the verified split is the whole, the unverified one is empty.
    assert verified == {key: value for key, value in audit_c1.items() if key in verified}
    assert (unverified["n"], unverified["reviewed"], unverified["mae"]) == (0, 0, None)
    assert audit_c1 == {
        "criterion_key": "c1",
        "title": "Greets",
        "scale_min": 1,
        "scale_max": 5,
        "n": 4,
        "model_mean": 3.75,
        "human_mean": 3.0,
        "bias": 0.75,
        "mae": 0.75,
        "exact_agreement": 0.5,
        "within_one": 0.75,
        "qwk": float(Fraction(2, 7)),
        "reviewed": 4,
        "rejected": 1,
        "rejection_rate": 0.25,
        "not_applicable_disputed": 0,
    }
    assert [by_group[group]["c1"]["n"] for group in ("random_audit", "flagged", "all")] == [4, 3, 7]
    assert by_group["flagged"]["c2"]["qwk"] is None
    assert (body["groups"]["flagged"]["recordings"], body["groups"]["flagged"]["needs_review"]) == (3, 1)


def test_evidence_report(api, care_rubric, evidence_data):
    body = api.get("/api/reports/evidence/", {"rubric": "care", "version": 1}).json()
    assert body["overall"] == {"total": 8, "unverified": 4, "rate": 0.5}
    assert body["criteria"][1] | {"unverified_by_status": None} == {
        "criterion_key": "c2",
        "title": "Confirms",
        "description": "The agent confirms the issue.",
        "evidence_guidance": "Quote the agent's words.",
        "total": 4,
        "unverified": 3,
        "rate": 0.75,
        "unverified_by_status": None,
    }
    assert body["criteria"][1]["unverified_by_status"] == {"not_found": 1, "empty": 1, "too_short": 1}
    assert [(m["model"], m["prompt_version"], m["rate"], [w["week"] for w in m["weeks"]]) for m in body["models"]] == [
        ("m1", "p1", 0.75, ["2026-03-02"]),
        ("m1", "p2", 0.0, ["2026-03-09"]),
        ("m2", "p2", 0.5, ["2026-03-09"]),
    ]
    assert body["weeks"] == [
        {"week": "2026-03-02", "total": 4, "unverified": 3, "rate": 0.75},
        {"week": "2026-03-09", "total": 4, "unverified": 1, "rate": 0.25},
    ]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({}, "rubric"),
        ({"rubric": "care", "version": "x"}, "version"),
        ({"rubric": "care", "date_from": "2026-03-10", "date_to": "2026-03-01"}, "date_to"),
        ({"rubric": "care", "date_to": "9999-12-31"}, "date_to"),
        ({"rubric": "care", "date_from": "xx"}, "date_from"),
    ],
)
@pytest.mark.parametrize("report", ["deviation", "evidence"])
def test_bad_filters_answer_400_naming_the_field(api, care_rubric, query, field, report):
    response = api.get(f"/api/reports/{report}/", query)
    assert response["Content-Type"] == "application/json"
    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_access(care_rubric):
    client = APIClient()
    assert client.get("/api/reports/evidence/", {"rubric": "care"}).status_code in (401, 403)
    client.force_authenticate(UserFactory())
    assert client.get("/api/reports/evidence/", {"rubric": "care"}).status_code == 403
    client.force_authenticate(UserFactory(groups=["Rubric owners"]))
    assert client.get("/api/reports/evidence/", {"rubric": "care"}).status_code == 200
    key = ApiKey.objects.create(name="bi", prefix="abcd1234", key_hash="x")
    client.force_authenticate(user=None, token=key)
    assert client.get("/api/reports/evidence/", {"rubric": "care"}).status_code == 200


@pytest.mark.django_db
def test_every_deviation_figure_is_split_by_verified_and_unverified_quotes(api, care_rubric):
    """The report measures the judge, so an unverified value is compared, but apart: r1's c1 quote
    verified (4 against 4), r2's did not (5 against the supervisor's own 2)."""
    from reviews.services import CriterionAdjustment, review_create
    from tests.factories import judged_recording

    r1 = judged_recording(rubric=care_rubric, values={"c1": 4, "c2": 2})
    review_create(recording=r1, decision="approve", reviewer="s")
    r2 = judged_recording(rubric=care_rubric, values={"c1": 5, "c2": 2})
    r2.current_run.scores.filter(criterion__key="c1").update(evidence_verified=False, verification_status="not_found")
    review_create(recording=r2, decision="approve", reviewer="s", criteria=[CriterionAdjustment("c1", 2)])

    body = api.get("/api/reports/deviation/", {"rubric": "care"}).json()
    c1 = next(row for row in body["groups"]["all"]["criteria"] if row["criterion_key"] == "c1")
    assert (c1["n"], c1["mae"]) == (2, 1.5)
    assert (c1["verified"]["n"], c1["verified"]["mae"], c1["verified"]["model_mean"]) == (1, 0.0, 4.0)
    assert (c1["unverified"]["n"], c1["unverified"]["mae"], c1["unverified"]["model_mean"]) == (1, 3.0, 5.0)
    c2 = next(row for row in body["groups"]["all"]["criteria"] if row["criterion_key"] == "c2")
    assert (c2["verified"]["n"], c2["unverified"]["n"]) == (2, 0)
