"""The routing table where people decide: GET /api/rubrics/{slug}/routing/, `routing_certify --rubric SLUG` and the
rubric's admin page, each with a certified criterion and one with too few audits."""

from __future__ import annotations

import datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from routing.services import thresholds_certify
from tests.api.conftest import api, api_key  # noqa: F401  (the fixtures)
from tests.factories import published_rubric
from tests.routing.test_thresholds import reviewed_call
from tests.test_admin import owner_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def rubric():
    """25 audited calls, every value agreeing: c1 at 0.9 (certified at 0.9, bound 0.1^(1/25) = 0.912), c2 at 0.8
    (certified at 0.8). `sparse` has 5 audited calls: it needs 17 more pairs."""
    rubric = published_rubric(slug="care", criteria=2)
    for _ in range(25):
        reviewed_call(rubric, confidence={"c1": 0.9, "c2": 0.8}, human={"c1": 4, "c2": 4}, reasons=["random_audit"])
    return rubric


@pytest.fixture
def sparse():
    rubric = published_rubric(slug="sparse", criteria=1)
    for _ in range(5):
        reviewed_call(rubric, confidence={"c1": 0.9}, human={"c1": 4}, reasons=["random_audit"])
    return rubric


def test_the_api_lists_each_criterion_s_certificate(api, rubric, sparse):  # noqa: F811
    thresholds_certify()
    body = api.get("/api/rubrics/care/routing/").json()
    assert (body["slug"], body["version"], body["target"], body["risk"], body["tolerance"], body["fixed_threshold"]) == (
        "care", 1, 0.9, 0.1, "exact", 0.75
    )  # fmt: skip
    c1, c2 = body["criteria"]
    assert (c1["key"], c1["certified"], c1["threshold"], c1["coverage"], c1["pairs"], c1["more_pairs_needed"]) == (
        "c1", True, 0.9, 1.0, 25, 0
    )  # fmt: skip
    assert c1["guaranteed_agreement"] == pytest.approx(0.1 ** (1 / 25))
    assert (c1["judge"], c1["model"], c1["prompt_version"], c1["day"]) == (
        "", "test-model", "test", timezone.localdate().isoformat()
    )  # fmt: skip
    assert (c2["threshold"], c2["certified"]) == (0.8, True)

    [only] = api.get("/api/rubrics/sparse/routing/").json()["criteria"]
    assert (only["certified"], only["threshold"], only["guaranteed_agreement"], only["coverage"]) == (False, 0.75, None, None)
    assert (only["pairs"], only["more_pairs_needed"]) == (5, 17)

    assert api.get("/api/rubrics/nope/routing/").status_code == 404
    assert api.get("/api/rubrics/care/routing/?version=0").status_code == 400


def test_before_any_certification_every_criterion_waits(api, rubric):  # noqa: F811
    body = api.get("/api/rubrics/care/routing/").json()
    assert [(row["key"], row["certified"], row["pairs"], row["more_pairs_needed"], row["day"]) for row in body["criteria"]] == [
        ("c1", False, 0, 22, None), ("c2", False, 0, 22, None),
    ]  # fmt: skip


def test_the_command_certifies_today_and_prints_the_table(rubric, sparse):
    out = StringIO()
    call_command("routing_certify", "--rubric", "care", stdout=out)
    text = out.getvalue()
    assert "care v1: unreviewed values agree with a supervisor (exact) at least 90% of the time, with probability 90%" in text
    line = next(line for line in text.splitlines() if line.startswith("c1 "))
    assert "/test-model/test" in line and "0.90" in line and "0.912" in line and line.endswith("certified")
    assert str(timezone.localdate()) in line

    out = StringIO()
    call_command("routing_certify", "--rubric", "sparse", stdout=out)
    line = next(line for line in out.getvalue().splitlines() if line.startswith("c1 "))
    assert line.endswith("uncertified: needs 17 more audited pairs") and " 0.75 " in line

    with pytest.raises(CommandError, match="No rubric 'nope'"):
        call_command("routing_certify", "--rubric", "nope")


def test_the_admin_page_shows_the_table_in_both_languages(client, rubric, sparse):
    thresholds_certify()
    thresholds_certify(day=timezone.localdate() - datetime.timedelta(days=1))  # an older day: not the one shown
    client = owner_client(client)
    page = client.get(reverse("admin:rubrics_rubric_change", args=[rubric.pk]), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Routing with a guarantee" in page and "Guaranteed agreement" in page
    assert "at least 90% of the time, with probability 90%" in page and "keeps the fixed threshold 0.75" in page
    assert "0.912" in page and "Certified" in page
    section = page[page.index('class="rubric-routing'):]
    section = section[: section.index("</section>")]
    assert section.count("<code>c1</code>") == 1  # today's certificate only, not yesterday's beside it
    sparse_page = client.get(
        reverse("admin:rubrics_rubric_change", args=[sparse.pk]), HTTP_ACCEPT_LANGUAGE="es"
    ).content.decode()
    assert "Enrutamiento con garantía" in sparse_page
    assert "Sin certificar: faltan 17 pares auditados" in sparse_page and "al menos el 90% de las veces" in sparse_page
