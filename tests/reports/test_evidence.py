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


def test_cost_per_model_and_week_at_each_judges_prices(care_rubric, evidence_data, client, supervisor):
    """Issue 45: runs a-d (evidence_data) with tokens; a and b by a priced judge, b batched at half price,
    c by a judge without prices, d by the environment's judge."""
    from decimal import Decimal

    from qa.models import Judge, JudgeRun
    from insights.reports.selectors import judge_costs

    priced = Judge.objects.create(name="priced", model="m1", prompt_price=Decimal("2.50"),
                                  cached_prompt_price=Decimal("1.25"), completion_price=Decimal("10.00"),
                                  batch_discount=Decimal("50"))  # fmt: skip
    unpriced = Judge.objects.create(name="unpriced", model="m1")
    tokens = {"prompt_tokens": 1200, "cached_tokens": 1024, "completion_tokens": 300}
    JudgeRun.objects.filter(pk=evidence_data["a"].pk).update(judge=priced, **tokens)
    JudgeRun.objects.filter(pk=evidence_data["b"].pk).update(judge=priced, batched=True, **tokens)
    JudgeRun.objects.filter(pk=evidence_data["c"].pk).update(judge=unpriced, **tokens)
    JudgeRun.objects.filter(pk=evidence_data["d"].pk).update(**tokens)

    rows = judge_costs(ReportFilters(rubric=care_rubric))

    # The worked example of tests/judge/test_costs.py: 0.00472 a call, 0.00236 batched.
    assert [(r.model, r.week, r.calls, r.prompt_tokens, r.cached_tokens, r.priced_calls, r.cost) for r in rows] == [
        ("m1", W1, 2, 2400, 2048, 2, Decimal("0.00708")),
        ("m1", W2, 1, 1200, 1024, 0, Decimal(0)),
        ("m2", W2, 1, 1200, 1024, 0, Decimal(0)),
    ]
    assert rows[0].cost_per_call == Decimal("0.00354") and rows[1].cost_per_call is None

    client.force_login(supervisor)
    page = client.get("/reports/evidence/", {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    section = page[page.index('<section class="card" id="costs">'):]
    assert "Cost per model and week" in section
    assert '<td class="num">0.007080</td><td class="num">0.003540</td>' in section
