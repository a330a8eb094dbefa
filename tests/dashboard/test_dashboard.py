"""The dashboard's figures are the reports' on the same data, the auto-fail rate is worked out by hand, the
page is the landing page of those who read reports, and the recording API carries the quality score."""

from __future__ import annotations

from datetime import date

import pytest
from django.test import Client

from access.scope import EVERYTHING
from qa.models import Recording
from insights.dashboard.selectors import dashboard
from reviews.filters import ReportFilters
from insights.reports.selectors import deviation_report, evidence_report
from insights.scorecards.selectors import scorecard
from reviews.selectors import QueueFilters, queue_page
from rubrics.models import Criterion
from tests.factories import UserFactory, judged_recording, published_rubric
from tests.reports.conftest import APPROVE, AUDIT, add_review, at

pytestmark = pytest.mark.django_db


def test_the_dashboards_figures_are_the_reports(teams_data):
    filters = ReportFilters(rubric=teams_data, date_from=date(2026, 3, 1), date_to=date(2026, 3, 31))
    board = dashboard(filters)
    total = scorecard(filters).totals[-1]  # the scorecards' quality score for the whole rubric
    assert (board.quality.estimate, board.quality.ci) == (total.estimate, total.ci)
    assert board.quality.estimate is not None
    assert board.evidence == evidence_report(filters).tally
    ceiling = deviation_report(filters).ceiling
    assert board.furthest == sorted(
        [row for row in ceiling if row.judge_human_qwk is not None], key=lambda row: row.judge_human_qwk
    )[:3]
    queued = queue_page(filters=QueueFilters(rubric=teams_data.slug, date_from=filters.date_from, date_to=filters.date_to), scope=EVERYTHING, size=50)
    assert board.backlog.waiting == queued.total
    # One week holds every call: its estimate is the period's.
    assert [week.week for week in board.weeks] == [date(2026, 3, 2)]
    assert board.weeks[0].estimate.estimate == pytest.approx(total.estimate)
    # The judge's weekly mean is over every judged call's score: a1 20, a2 6, a3 4.
    assert board.weeks[0].judge.n == 30


def test_the_auto_fail_rate_counts_the_values_that_exist():
    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    for value in (1, 2, 3, 5):
        judged_recording(rubric=rubric, values={"c1": value, "c2": 4}, occurred_at=at(2))
    unverified = judged_recording(rubric=rubric, values={"c1": 1, "c2": 4}, occurred_at=at(2))
    unverified.current_run.scores.filter(criterion__key="c1").update(evidence_verified=False, confidence=0)
    board = dashboard(ReportFilters(rubric=rubric))
    # 1 and 2 fail (at or below 2); the unverified 1 does not exist, so fails nothing.
    assert (board.judged, board.auto_failed) == (5, 2)
    assert [(rate.criterion.key, rate.failed, rate.calls) for rate in board.auto_fail] == [("c1", 2, 5)]


def test_the_landing_page_of_a_supervisor_is_the_dashboard_in_both_languages(teams_data):
    supervisor = UserFactory(groups=["Supervisors"])
    for language, title in (("en", "Quality score"), ("es", "Puntuación de calidad")):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(supervisor)
        response = client.get("/", follow=True)
        assert response.redirect_chain[-1][0] == "/dashboard/" and response.status_code == 200
        # A first visit opens on the last twelve weeks; the calls are in March.
        response = client.get("/dashboard/?rubric=care&date_from=2026-03-01")
        page = response.content.decode()
        assert response.status_code == 200 and title in page and "<svg" in page
        assert 'id="tile-backlog"' in page and "/reports/evidence/?rubric=care" in page


def test_the_recording_api_gives_the_quality_score_of_the_judgment_and_of_the_latest_final_review(client):
    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    recording = judged_recording(rubric=rubric, values={"c1": 3, "c2": 5}, review_reasons=[AUDIT], occurred_at=at(2))
    add_review(recording, APPROVE, when=at(3), entries={"c1": {"adjusted_value": 2}})
    client.force_login(UserFactory(groups=["Supervisors"]))
    data = client.get(f"/api/recordings/{recording.pk}/").json()
    # The judge: c1 3 → 50, c2 5 → 100: 75. The review: c1 2 fails the call, and the rubric zeroes it.
    assert data["judgment"] == {"quality_score": 75.0, "auto_failed": False, "auto_fail_criteria": [], "missing": []}
    review = data["latest_final_review"]
    assert (review["quality_score"], review["auto_failed"], review["auto_fail_criteria"]) == (0.0, True, ["c1"])
    assert review["decision"] == "approve"


def test_an_auto_failed_judgment_is_routed_for_review_unless_the_rubric_says_not_to():
    from qa.routing import routing_fields

    for route, expected in ((True, True), (False, False)):
        rubric = published_rubric(criteria=2, slug=f"r-{route}".lower(), name="R")
        Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
        type(rubric).objects.filter(pk=rubric.pk).update(route_auto_fail=route)
        rubric.refresh_from_db()
        recording = judged_recording(rubric=rubric, values={"c1": 1, "c2": 5})
        scores = list(recording.current_run.scores.select_related("criterion"))
        fields = routing_fields(recording=recording, rubric=rubric, scores=scores)
        assert ("auto_fail" in fields["review_reasons"]) is expected
        assert (fields["quality_score"], fields["auto_failed"]) == (0.0, True)
    assert Recording.ReviewReason.AUTO_FAIL.label == "Auto-fail"


def test_the_queue_sorts_by_the_quality_score_lowest_first():
    from tests.review.conftest import queued

    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    scores = {"high": 90.0, "none": None, "low": 10.0}
    made = {name: queued(rubric=rubric, external_id=name, confidence=0.5) for name in scores}
    for name, score in scores.items():  # as the routing stores them (qa.routing.routing_fields)
        Recording.objects.filter(pk=made[name].pk).update(quality_score=score, auto_failed=score == 10.0)
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(UserFactory(groups=["Supervisors"]))
    page = client.get("/review/?sort=quality").content.decode()
    assert page.index(">low</a>") < page.index(">high</a>") < page.index(">none</a>")  # without a score: last
    assert "10.0" in page and "auto-fail" in page


def test_the_reviewed_recordings_csv_has_the_judges_and_the_reviews_quality_score(client):
    from qa.routing import routing_fields
    from tests.reports.test_pages import rows_of

    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    recording = judged_recording(rubric=rubric, values={"c1": 3, "c2": 5}, review_reasons=[AUDIT], occurred_at=at(2))
    scores = list(recording.current_run.scores.select_related("criterion"))
    fields = routing_fields(recording=recording, rubric=rubric, scores=scores)
    Recording.objects.filter(pk=recording.pk).update(quality_score=fields["quality_score"])
    add_review(recording, APPROVE, when=at(3), entries={"c1": {"adjusted_value": 2}})
    client.force_login(UserFactory(groups=["Supervisors"]))
    response = client.get("/reports/deviation/recordings/", {"rubric": "collect", "format": "csv", "sep": ","})
    (row,) = rows_of(response)
    assert (row["judge_quality_score"], row["quality_score"]) == ("75.0", "0.0")
    assert (row["auto_failed"], row["auto_fail_criteria"]) == ("True", "c1")


def test_calls_judged_before_the_quality_score_get_the_routings_score():
    from qa.routing import routing_fields
    from qa.services import recordings_quality_store

    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    made = [judged_recording(rubric=rubric, values=values) for values in ({"c1": 1, "c2": 5}, {"c1": 4, "c2": 2})]
    unverified = judged_recording(rubric=rubric, values={"c1": 4, "c2": 5})
    unverified.current_run.scores.filter(criterion__key="c2").update(evidence_verified=False, confidence=0)
    made.append(unverified)
    assert recordings_quality_store(recordings=Recording.objects.all()) == 3
    for recording in made:
        recording.refresh_from_db()
        scores = list(recording.current_run.scores.select_related("criterion"))
        fields = routing_fields(recording=recording, rubric=rubric, scores=scores)
        assert (recording.quality_score, recording.auto_failed) == (fields["quality_score"], fields["auto_failed"])
    # (75 + 25) / 2; the unverified c2 has no value, so the third is c1's 75 alone, and says it leaves one out
    assert [(r.quality_score, r.quality_missing) for r in made] == [(0.0, 0), (50.0, 0), (75.0, 1)]


def test_the_quality_trend_is_of_the_calls_the_filters_and_the_reader_select(teams_data):
    from access.models import Role, Workspace
    from access.scope import scope_for
    from access.services import member_add

    period = {"rubric": teams_data, "date_from": date(2026, 3, 1), "date_to": date(2026, 3, 31)}
    [south] = dashboard(ReportFilters(**period, team="south")).weeks
    assert (south.judge.n, south.judge.mean) == (4, pytest.approx((3 * 3 + 5) / 4 * 25 - 25))  # c1 on 1–5 → 0–100
    [a1] = dashboard(ReportFilters(**period, agent="a1")).weeks
    assert a1.judge.n == 20
    marta = UserFactory(username="marta-north")
    member_add(user=marta, workspace=Workspace.objects.get(pk=teams_data.workspace_id), role=Role.SUPERVISOR, teams=["north"])
    [north] = dashboard(ReportFilters(**period, scope=scope_for(marta))).weeks
    assert north.judge.n == 26  # a1's 20 and a2's 6, none of south's


def test_the_dashboard_reads_whole_weeks_and_its_links_carry_them(teams_data):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(UserFactory(groups=["Supervisors"]))
    # Sunday 1 March to Tuesday 31 March: the weeks of Monday 23 February to Sunday 5 April.
    page = client.get("/dashboard/?rubric=care&date_from=2026-03-01&date_to=2026-03-31").content.decode()
    assert 'value="2026-02-23"' in page and 'value="2026-04-05"' in page
    assert "/reports/evidence/?rubric=care&amp;version=1&amp;date_from=2026-02-23&amp;date_to=2026-04-05" in page
    assert "reads whole weeks" in page
    # A date that is not one is the form's to report, left as it was.
    page = client.get("/dashboard/?rubric=care&date_from=2026-13-01").content.decode()
    assert 'value="2026-13-01"' in page and "Enter a valid date." in page


@pytest.mark.parametrize("language,shown", [("en", "81.2"), ("es", "81,2")])
def test_the_quality_tile_and_its_chart_round_the_figure_the_same_way(client, language, shown):
    """One figure, one rounding: 75 and 87.5 average to 81.25 exactly, which the tile rounded up (81,3,
    Django's floatformat) and its chart to even (81,2, the figures' `number`)."""
    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    judged_recording(rubric=rubric, values={"c1": 4, "c2": 4}, occurred_at=at(2))  # 75
    judged_recording(rubric=rubric, values={"c1": 5, "c2": 4}, occurred_at=at(3))  # 87.5
    board = dashboard(ReportFilters(rubric=rubric, date_from=date(2026, 3, 2), date_to=date(2026, 3, 8)))
    assert board.quality.estimate == pytest.approx(81.25)
    client.force_login(UserFactory(groups=["Supervisors"]))
    page = client.get(
        "/dashboard/?rubric=collect&date_from=2026-03-02&date_to=2026-03-08", HTTP_ACCEPT_LANGUAGE=language
    ).content.decode()
    tile = page.split('id="tile-quality"', 1)[1].split("</section>", 1)[0]
    figure = tile.split('<p class="figure">', 1)[1].split("</p>", 1)[0]
    chart = tile.split("<svg", 1)[1]
    assert figure == shown and f">{shown}<" in chart


def test_the_unverified_tile_says_why_above_half_and_the_page_names_the_default_judge():
    """Above half of the quotes unverified, the tile says in one line why and what to do, in both
    languages; at half or below it says nothing more. The page names the judge new runs take."""
    from qa.models import Judge

    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    recordings = [judged_recording(rubric=rubric, values={"c1": 4, "c2": 4}, occurred_at=at(2)) for _ in range(2)]
    Judge.objects.create(name="recorded-qwen", base_url="http://127.0.0.1:8739/v1", evidence_mode="reference",
                         model="Qwen2.5-Coder-1.5B-Instruct, recorded on 2026-12-03", is_default=True)  # fmt: skip
    supervisor = UserFactory(groups=["Supervisors"])
    why = {
        "en": "A small model writes quotes that are not in the transcript, and the verifier refuses every one",
        "es": "Un modelo pequeño escribe citas que no están en la transcripción, y el verificador las rechaza todas",
    }

    def page(language: str) -> str:
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(supervisor)
        response = client.get("/dashboard/?rubric=collect&date_from=2026-03-01")
        assert response.status_code == 200
        return response.content.decode()

    # 2 of 4 scores unverified: half, not above.
    recordings[0].current_run.scores.update(evidence_verified=False, confidence=0)
    Recording.objects.filter(rubric=rubric).update(rollup_stale=True)  # the tally reads the weekly rollups
    assert 'id="evidence-why"' not in page("en")
    recordings[1].current_run.scores.filter(criterion__key="c1").update(evidence_verified=False, confidence=0)
    Recording.objects.filter(rubric=rubric).update(rollup_stale=True)
    # The recorded judge's name in the page's language, words and date (issue 41: English on Spanish pages).
    named = {
        "en": "Judge: Qwen2.5-Coder-1.5B-Instruct, recorded on Dec. 3, 2026",
        "es": "Juez: Qwen2.5-Coder-1.5B-Instruct, respuestas grabadas el 3 de diciembre de 2026",
    }
    for language, line in why.items():
        text = page(language)
        assert 'id="evidence-why"' in text and line in text
        # The settings' names are code, not words (the second walk met OPENAI_BASE_URL as prose on a Spanish page).
        assert "<code>OPENAI_BASE_URL</code>" in text and "<code>QA_JUDGE_MODEL</code>" in text
        assert named[language] in text
    assert "recorded on" not in page("es")


def test_a_quality_chart_with_nothing_to_draw_says_why(client):
    """Issue 41's second walk: on the demo's calls (each with an unverified quote) the chart drew its axes alone."""
    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    recording = judged_recording(rubric=rubric, values={"c1": 4, "c2": 4}, occurred_at=at(2))
    recording.current_run.scores.filter(criterion__key="c2").update(evidence_verified=False, confidence=0)
    Recording.objects.filter(rubric=rubric).update(rollup_stale=True)  # the figures read the rollups
    client.force_login(UserFactory(groups=["Supervisors"]))
    for language, words in (("en", "Nothing to draw yet"), ("es", "Aún no hay nada que dibujar")):
        page = client.get("/dashboard/?rubric=collect&date_from=2026-03-02&date_to=2026-03-08", HTTP_ACCEPT_LANGUAGE=language).content.decode()
        tile = page.split('id="tile-quality"', 1)[1].split("</section>", 1)[0]
        assert 'id="trend-empty"' in tile and words in tile and "<svg" not in tile
