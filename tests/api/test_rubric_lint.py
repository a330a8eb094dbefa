"""GET /api/rubrics/{slug}/lint/: the lint's findings, in the request's language."""

from __future__ import annotations

import pytest

from tests.rubrics.test_lint import bad_rubric, sample

pytestmark = pytest.mark.django_db


def test_lint_lists_findings_and_says_whether_publishable(api, api_key):
    bad_rubric()

    body = api.get("/api/rubrics/bad/lint/").json()  # the client asks for English

    assert (body["slug"], body["version"], body["status"], body["publishable"]) == ("bad", 1, "draft", False)
    error = next(finding for finding in body["findings"] if finding["severity"] == "error")
    assert error["criterion"] == "na-without-situation"
    assert error["rule"] == "not-applicable-without-situation"
    assert "does not apply without saying when" in error["message"]
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key[1]}", HTTP_ACCEPT_LANGUAGE="es")
    spanish = api.get("/api/rubrics/bad/lint/").json()
    assert "no aplica sin decir cuándo" in next(f for f in spanish["findings"] if f["severity"] == "error")["message"]


def test_lint_of_a_published_sample_has_warnings_only(api):
    from rubrics.services import rubric_publish

    rubric_publish(rubric=sample("customer-care"))

    body = api.get("/api/rubrics/customer-care/lint/?version=1").json()

    assert body["publishable"] is True
    assert {(f["criterion"], f["rule"], f["severity"]) for f in body["findings"]} == {
        ("greeting", "two-behaviours", "warning"),
        ("closing", "two-behaviours", "warning"),
        ("closing", "vague-wording", "warning"),
    }


def test_lint_of_an_unknown_rubric_or_version(api):
    sample("customer-care")
    assert api.get("/api/rubrics/nope/lint/").status_code == 404
    assert api.get("/api/rubrics/customer-care/lint/?version=7").status_code == 404
    assert api.get("/api/rubrics/customer-care/lint/?version=x").status_code == 400


def test_lint_needs_a_key(client):
    assert client.get("/api/rubrics/customer-care/lint/").status_code == 401
