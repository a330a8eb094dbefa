"""Cost per call (issue 45): a judge's price table (prompt, cached prompt, completion per million tokens,
batch discount) applied to the tokens each run used, in Decimal, against a worked example; shown on the
review page, in the API's run and beside agreement in experiments."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from qa.costs import call_cost
from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import Judge, JudgeRun
from tests.api.conftest import key_client, new_key
from tests.review.conftest import client_for
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db

# The worked example: prompt 2.50, cached prompt 1.25, completion 10.00 per million tokens, 50% off in a
# batch. A call of 1,200 prompt tokens, 1,024 of them cached, and 300 completion tokens costs
#   176 x 2.50 + 1,024 x 1.25 + 300 x 10.00 = 440 + 1,280 + 3,000 = 4,720 per million = 0.00472,
# and half that, 0.00236, in a batch. Without a cached price, all 1,200 at 2.50: 0.006.
PRICES = {"prompt_price": Decimal("2.50"), "cached_prompt_price": Decimal("1.25"),
          "completion_price": Decimal("10.00"), "batch_discount": Decimal("50")}


def test_the_worked_example():
    judge = Judge(name="priced", **PRICES)
    assert call_cost(judge=judge, prompt_tokens=1200, cached_tokens=1024, completion_tokens=300) == Decimal("0.00472")
    assert call_cost(judge=judge, prompt_tokens=1200, cached_tokens=1024, completion_tokens=300, batch=True) == Decimal(
        "0.00236"
    )
    uncached = Judge(name="plain", prompt_price=Decimal("2.50"), completion_price=Decimal("10.00"))
    assert call_cost(judge=uncached, prompt_tokens=1200, cached_tokens=1024, completion_tokens=300) == Decimal("0.006")
    # No prices, no cost (not zero: nobody said the calls were free).
    assert call_cost(judge=Judge(name="unpriced"), prompt_tokens=1200, completion_tokens=300) is None
    # Decimal: a million such calls sum to exactly a million times one, where binary floats drift.
    one = call_cost(judge=judge, prompt_tokens=1200, cached_tokens=1024, completion_tokens=300)
    assert sum([one] * 1_000_000, Decimal(0)) == Decimal("4720")
    assert sum([0.00472] * 1_000_000) != 4720


def test_a_cached_count_above_the_prompt_is_not_billed_below_zero():
    judge = Judge(name="priced", **PRICES)
    assert call_cost(judge=judge, prompt_tokens=100, cached_tokens=500, completion_tokens=0) == Decimal("0.000125")


@pytest.fixture
def priced_judge(fake_llm):
    return Judge.objects.create(
        name="priced", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
        is_default=True, evidence_mode="quote", **PRICES,
    )  # fmt: skip


def test_the_run_shows_its_cost_on_the_review_page_and_in_the_api(fake_llm, priced_judge, recording, supervisor):
    fake_llm.script(lambda request: completion(answer_for(request), prompt_tokens=1200, cached_tokens=1024))
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    run = JudgeRun.objects.select_related("judge").get(pk=run.pk)
    assert run.status == JudgeRun.Status.SUCCEEDED
    assert run.cost == Decimal("0.00472")

    page = client_for(supervisor).get(f"/review/{recording.pk}/").content.decode()
    usage = re.search(r'<span class="run-usage">(.*?)</span></span>', page, re.S).group(1)
    assert "1200 (1024 cached) + 300" in usage
    assert '<span class="run-cost">0.00472' in usage

    _, key = new_key("costs", all_sources=True)
    latest = key_client(key).get(f"/api/recordings/{recording.pk}/").json()["latest_run"]
    assert (latest["prompt_tokens"], latest["cached_tokens"], latest["completion_tokens"]) == (1200, 1024, 300)
    assert Decimal(latest["cost"]) == Decimal("0.00472") and latest["batched"] is False


def test_a_judge_without_prices_shows_no_cost(fake_llm, recording, supervisor):
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    page = client_for(supervisor).get(f"/review/{recording.pk}/").content.decode()
    assert "run-usage" in page and "run-cost" not in page
    _, key = new_key("costs", all_sources=True)
    assert key_client(key).get(f"/api/recordings/{recording.pk}/").json()["latest_run"]["cost"] is None
