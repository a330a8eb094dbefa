"""Evidence-quality figures against conftest.evidence_data, worked out by hand."""

from __future__ import annotations

from datetime import date

from reviews.filters import ReportFilters
from insights.reports.selectors import EvidenceCell, evidence_report, evidence_scores
from reviews.figures.stats import Tally

W1, W2 = date(2026, 3, 2), date(2026, 3, 9)


def test_rates_overall_per_criterion_model_and_week(care_rubric, evidence_data, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        report = evidence_report(ReportFilters(rubric=care_rubric))
    # Runs a-d count (e failed, f is another rubric): 8 scores, 4 unverified.
    assert report.tally == Tally(8, 4)
    assert report.tally.rate == 0.5
    assert [(row.criterion.key, row.tally, row.unverified_by_status) for row in report.criteria] == [
        ("c1", Tally(4, 1), {"paraphrase": 1}),
        ("c2", Tally(4, 3), {"not_found": 1, "empty": 1, "too_short": 1}),
    ]
    assert [
        (row.model, row.prompt_version, row.tally, [(w.week, w.tally) for w in row.weeks]) for row in report.models
    ] == [
        ("m1", "p1", Tally(4, 3), [(W1, Tally(4, 3))]),
        ("m1", "p2", Tally(2, 0), [(W2, Tally(2, 0))]),
        ("m2", "p2", Tally(2, 1), [(W2, Tally(2, 1))]),  # Sunday 15 March 23:00 is still the week of the 9th
    ]
    assert [(row.week, row.tally) for row in report.weeks] == [(W1, Tally(4, 3)), (W2, Tally(4, 1))]


def test_a_run_missing_a_score_is_counted_as_it_is(care_rubric, evidence_data, django_assert_num_queries):
    # Runs times criteria would say 2 scores for run c; with one gone the scores are counted instead.
    evidence_data["c"].scores.get(criterion__key="c2").delete()
    with django_assert_num_queries(5):
        report = evidence_report(ReportFilters(rubric=care_rubric))
    assert report.tally == Tally(7, 4)
    assert [(row.model, row.prompt_version, row.tally) for row in report.models] == [
        ("m1", "p1", Tally(4, 3)),
        ("m1", "p2", Tally(1, 0)),
        ("m2", "p2", Tally(2, 1)),
    ]
    assert [(row.week, row.tally) for row in report.weeks] == [(W1, Tally(4, 3)), (W2, Tally(3, 1))]


def test_drilldown_rows_are_the_scores_behind_the_cell(care_rubric, evidence_data):
    c2 = care_rubric.criteria.get(key="c2")
    filters = ReportFilters(rubric=care_rubric)
    rows = evidence_scores(filters, EvidenceCell(criterion=c2, unverified_only=True))
    assert sorted(score.evidence for score in rows) == ["quote a c2", "quote b c2", "quote d c2"]
    rows = evidence_scores(filters, EvidenceCell(model="m1", prompt_version="p1", week=W1))
    assert sorted(score.evidence for score in rows) == ["quote a c1", "quote a c2", "quote b c1", "quote b c2"]
    assert evidence_scores(filters, EvidenceCell(week=W2, unverified_only=True)).get().evidence == "quote d c2"
