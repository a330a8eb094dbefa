"""A report opens on something: the version with the latest reviews, versions from a list, a clear
"no reviews yet", n on every row with small ones marked, and reject reasons counted."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from reviews.models import Review
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import judged_recording, published_rubric
from tests.reports.conftest import APPROVE, AUDIT, LOW, REJECT, add_review, at

pytestmark = pytest.mark.django_db


def get(client, **query):
    return client.get(reverse("reports:deviation"), query, HTTP_ACCEPT_LANGUAGE="en")


def test_the_report_opens_on_the_version_with_the_most_recent_reviews(client, supervisor, care_rubric):
    first = published_rubric(slug="aaa-first")  # sorts first, never reviewed
    judged_recording(rubric=first)
    reviewed = judged_recording(rubric=care_rubric, review_reasons=[AUDIT])
    add_review(reviewed, APPROVE, when=at(10))
    newer = rubric_publish(rubric=rubric_new_version(rubric=care_rubric))  # published, but nobody reviewed it yet
    client.force_login(supervisor)

    response = get(client)
    assert response.context["report"].rubric == care_rubric
    html = response.content.decode()
    # Versions come from a list, newest first, the one shown selected.
    select = re.search(r'<select name="version".*?</select>', html, re.S).group()
    options = re.findall(r'<option value="(\d*)"( selected)?>', select)
    assert options == [("", ""), (str(newer.version), ""), (str(care_rubric.version), " selected")]


def test_a_version_without_reviews_says_so_and_links_to_the_previous_one(client, supervisor, care_rubric):
    reviewed = judged_recording(rubric=care_rubric, review_reasons=[AUDIT])
    add_review(reviewed, APPROVE, when=at(10))
    newer = rubric_publish(rubric=rubric_new_version(rubric=care_rubric))
    client.force_login(supervisor)

    html = get(client, rubric="care", version=newer.version).content.decode()
    notice = re.search(r'<p class="notice warn" id="no-reviews">.*?</p>', html, re.S).group()
    assert "No reviews yet for this version." in notice
    assert f'href="/reports/deviation/?rubric=care&amp;version={care_rubric.version}"' in notice
    assert "<svg" not in html  # no blank charts


def test_every_row_shows_n_and_rows_under_ten_pairs_are_marked_too_few(client, supervisor, care_rubric):
    for index in range(10):
        recording = judged_recording(rubric=care_rubric, values={"c1": 4, "c2": 2}, review_reasons=[AUDIT])
        # c2 is "does not apply" on all but one call: it has one pair; c1 has ten.
        entries = {} if index == 0 else {"c2": {"not_applicable": True, "comment": "No aplica."}}
        add_review(recording, APPROVE, when=at(10), entries=entries)
    client.force_login(supervisor)

    response = get(client, rubric="care")
    everything = next(group for group in response.context["groups"] if group["key"] == "all")
    rows = {row["criterion"].key: row for row in everything["rows"]}
    assert (rows["c1"]["cells"][0].text, rows["c1"]["too_few"]) == ("10", False)
    assert (rows["c2"]["cells"][0].text, rows["c2"]["too_few"]) == ("1", True)
    html = response.content.decode()
    # c2 in the random audit and in all, and both in the empty warm-up and flagged groups (n = 0).
    assert html.count('<tr class="too-few">') == 6
    assert html.count("too few</span>") == 6
    # The charts are labelled by title and leave out the figure from one pair.
    assert ">Greets</text>" in html and ">c1</text>" not in html


def test_rejects_are_counted_by_their_overall_reason(client, supervisor, care_rubric):
    for reason in ("wrong_score", "wrong_score", "transcript_problem", ""):
        recording = judged_recording(rubric=care_rubric, review_reasons=[LOW])
        review = add_review(recording, REJECT, when=at(10), entries={"c1": {"rejected": True, "comment": "x"}})
        Review.objects.filter(pk=review.pk).update(reject_reason=reason)
    client.force_login(supervisor)

    response = get(client, rubric="care")
    flagged = response.context["report"].groups["flagged"]
    assert flagged.reject_reasons == {"wrong_score": 2, "transcript_problem": 1, "": 1}
    html = response.content.decode()
    assert "Wrong score · 2" in html and "Transcript problem · 1" in html and "no reason given · 1" in html
    api = client.get("/api/reports/deviation/", {"rubric": "care"}).json()
    assert api["groups"]["flagged"]["reject_reasons"] == {"wrong_score": 2, "transcript_problem": 1, "": 1}
