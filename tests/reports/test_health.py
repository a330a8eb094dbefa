"""Each criterion's health on the rubric's admin page: the figures of the published
version beside the previous one's, the worst quarter marked, the lint beside it."""

from __future__ import annotations

from django.urls import reverse

from reviews.figures.stats import MIN_N
from reviews.filters import Group, ReportFilters
from insights.reports.selectors import deviation_report, evidence_report, rubric_health, worst_quarter
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import UserFactory


def test_health_reads_the_reports_figures_and_marks_the_worst_quarter(care_rubric, deviation_data, evidence_data):
    health = rubric_health(slug="care")

    assert (health.current, health.previous) == (care_rubric, None)
    deviation = {row.criterion.key: row.agreement for row in deviation_report(ReportFilters(rubric=care_rubric)).groups[Group.ALL].criteria}
    evidence = {row.criterion.key: row.tally for row in evidence_report(ReportFilters(rubric=care_rubric)).criteria}
    for row in health.criteria:
        key = row.current.criterion.key
        assert row.current.agreement == deviation[key]
        assert row.current.evidence == evidence[key]
        assert row.previous is None
    c1, c2 = health.criteria
    # Rejections: c1 1 of 7, c2 1 of 7: fewer than MIN_N reviews, so neither is flagged; unverified quotes:
    # the evidence runs' c1 1 and c2 3, among the reviewed runs' verified quotes (10 of each). Two criteria: a
    # quarter is one.
    assert (c1.current.agreement.rejection_rate, c2.current.agreement.rejection_rate) == (1 / 7, 1 / 7)
    assert (c1.current.evidence.unverified, c2.current.evidence.unverified) == (1, 3)
    assert c1.current.evidence.total == c2.current.evidence.total >= MIN_N
    assert (c1.worst_rejection, c1.worst_unverified, c2.worst_rejection, c2.worst_unverified) == (False, False, False, True)


def test_the_worst_quarter_needs_enough_reviews_and_a_rate_above_the_rest():
    assert worst_quarter({"a": (0.5, 2), "b": (0.0, 2)}) == set()  # 1 of 2 reviews says nothing
    assert worst_quarter({"a": (0.2, 40), "b": (0.2, 40), "c": (0.2, 40), "d": (0.2, 40)}) == set()  # identical
    assert worst_quarter({"a": (0.3, 40), "b": (0.3, 40), "c": (0.1, 40), "d": (0.1, 40)}) == set()  # a tie across the cut
    assert worst_quarter({"a": (0.3, 40), "b": (0.2, 40), "c": (0.1, 40), "d": (0.0, 40), "e": (0.5, 3)}) == {"a"}
    assert worst_quarter({"a": (0.3, 40)}) == set()  # nothing to compare it with


def test_a_new_version_shows_the_previous_figures_following_replaces(care_rubric, deviation_data):
    draft = rubric_new_version(rubric=care_rubric)
    draft.criteria.filter(key="c1").update(key="c1-name", replaces="c1")
    second = rubric_publish(rubric=draft)

    health = rubric_health(slug="care")

    assert (health.current, health.previous) == (second, care_rubric)
    c1, c2 = health.criteria
    assert (c1.current.criterion.key, c1.previous.criterion.key) == ("c1-name", "c1")
    assert c1.current.agreement.reviewed == 0 and c1.previous.agreement.reviewed == 7
    assert c2.previous.criterion.rubric == care_rubric


def test_the_rubric_admin_page_shows_health_with_links_and_lint(client, care_rubric, deviation_data):
    client.force_login(UserFactory(is_staff=True, groups=["Rubric owners"]))

    page = client.get(reverse("admin:rubrics_rubric_change", args=[care_rubric.pk]), HTTP_ACCEPT_LANGUAGE="es")

    text = page.content.decode()
    assert "Salud de los criterios" in text
    assert f"{reverse('reports:deviation-scores')}?rubric=care&amp;version=1&amp;group=all&amp;criterion=c2" in text
    assert text.count("14 %") >= 2  # c1's and c2's rejection rates
    assert "⚑" in text
    assert "No hay excepciones escritas" in text  # the lint's finding, beside the figures
