"""What a judge's calls cost (issue 45): from the tokens a run used and its judge's price table.

Prices are per million tokens, in whatever currency the operator enters them (Decimal throughout:
a sum over millions of calls must not drift). A prompt token the server read from its cache
(`cached_tokens`, a part of `prompt_tokens`) is billed at the cached price, the rest at the prompt
price, the answer at the completion price; a call sent in a batch has the batch discount taken off all
three, which is how OpenAI bills its Batch API.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Protocol

MILLION = Decimal(1_000_000)
HUNDRED = Decimal(100)


class PriceTable(Protocol):
    """A judge's prices (qa.models.Judge has them), per million tokens; None: not set."""

    prompt_price: Decimal | None
    cached_prompt_price: Decimal | None
    completion_price: Decimal | None
    batch_discount: Decimal  # percent


def call_cost(
    *, judge: PriceTable, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, batch: bool = False
) -> Decimal | None:
    """The cost of these tokens at `judge`'s prices; None when its prompt or completion price is not set."""
    if judge.prompt_price is None or judge.completion_price is None:
        return None
    cached = min(max(cached_tokens, 0), prompt_tokens)
    cached_price = judge.prompt_price if judge.cached_prompt_price is None else judge.cached_prompt_price
    total = (
        judge.prompt_price * (prompt_tokens - cached) + cached_price * cached + judge.completion_price * completion_tokens
    ) / MILLION
    if batch:
        total = total * (HUNDRED - Decimal(judge.batch_discount)) / HUNDRED
    return total
