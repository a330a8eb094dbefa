"""The evidence report counts the new verification status, `wrong_subject`, among the unverified
quotes, names it on the page in both languages, and the scores' CSV says it."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from qa.evidence import verify_evidence
from qa.judging import verification_fields
from qa.models import Score
from reviews.filters import ReportFilters
from insights.reports.selectors import evidence_report
from rubrics.models import Criterion
from tests.factories import judged_recording

pytestmark = pytest.mark.django_db

CUSTOMER_LINE = "CLIENTE: Hola, me cobraron dos veces la factura de octubre."


@pytest.fixture
def judged(care_rubric):
    """Two calls; c1 judges the agent, and on the first its quote is the customer's line."""
    Criterion.objects.filter(rubric=care_rubric, key="c1").update(subject=Criterion.Subject.AGENT)
    recordings = [judged_recording(rubric=care_rubric) for _ in range(2)]
    for recording, quote in zip(recordings, [CUSTOMER_LINE, "AGENTE: Buenas tardes, le atiende Marta"]):
        score = recording.current_run.scores.select_related("criterion").get(criterion__key="c1")
        fields = verification_fields(
            evidence=quote, transcript=recording.transcript, model_confidence=0.9, subject=score.criterion.subject
        )
        Score.objects.filter(pk=score.pk).update(evidence=quote, **fields)
    return recordings


def test_the_evidence_report_counts_wrong_subject(care_rubric, judged):
    assert verify_evidence(CUSTOMER_LINE, judged[0].transcript).verified  # for anyone, it would verify

    report = evidence_report(ReportFilters(rubric=care_rubric))

    [c1, _] = report.criteria
    assert c1.unverified_by_status == {"wrong_subject": 1}
    assert c1.tally.total == 2 and c1.tally.unverified == 1


@pytest.mark.parametrize(
    ("language", "label"),
    [("en", "not the words of the person this criterion judges"), ("es", "no son palabras de quien este criterio evalúa")],
)
def test_the_page_names_it(client, rubric_owner, care_rubric, judged, language, label):
    client.force_login(rubric_owner)

    page = client.get(reverse("reports:evidence"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert f"{label} · 1" in page


def test_the_scores_drilldown_lists_it(client, rubric_owner, care_rubric, judged):
    client.force_login(rubric_owner)

    url = reverse("reports:evidence-scores")
    query = {"rubric": "care", "criterion": "c1", "unverified": "on"}

    page = client.get(url, query, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "not the words of the person this criterion judges" in page
    response = client.get(url, {**query, "format": "csv"}, HTTP_ACCEPT_LANGUAGE="en")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode().removeprefix("\ufeff"))))
    assert [(row["criterion_key"], row["verification_status"]) for row in rows] == [("c1", "wrong_subject")]
