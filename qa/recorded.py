"""A judge that answers from recorded answers (qa.replay): the first run's judge.

The recorded judge is an ordinary named judge, an OpenAI-compatible server on loopback (the replay
server), so every step after the answer (validation, the verifier, routing, reports) is the product's
own. Its `model` is what every page that shows a run's model shows, so it names the model and the day
it was recorded ("Qwen2.5-Coder-1.5B-Instruct, recorded on 2026-12-03"): nobody mistakes a replayed
answer for a live one.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable

from django.db import transaction
from django.utils.formats import date_format
from django.utils.text import slugify
from django.utils.translation import gettext

from qa.models import Judge, JudgeRun
from qa.replay import NOT_RECORDED, Recorded

RECORDED_PREFIX = "recorded-"


# How a recording names its model (the recording's header "display", stored as the judge's and each
# run's `model`): the stored text stays English, because reports group and filter runs by it.
RECORDED_ON = re.compile(r"^(?P<model>.+), recorded on (?P<day>\d{4}-\d{2}-\d{2})$")


def model_label(model: str) -> str:
    """A run's or judge's model as a page in the reader's language names it: a recorded judge's
    "…, recorded on 2026-12-03" gets its words and its date in that language ("…, grabado el 3 de
    diciembre de 2026"); any other model is shown as it is."""
    match = RECORDED_ON.match(model or "")
    if not match:
        return model
    try:
        day = datetime.date.fromisoformat(match["day"])
    except ValueError:
        return model
    return gettext("%(model)s, recorded on %(date)s") % {"model": match["model"], "date": date_format(day, "DATE_FORMAT")}


def recorded_judge_name(recorded: Recorded) -> str:
    return slugify(f"{RECORDED_PREFIX}{recorded.header.get('server_model') or recorded.path.stem}")[:100]


@transaction.atomic
def recorded_judge_make_default(*, recorded: Recorded, base_url: str) -> Judge:
    """The judge row for a replay server on `base_url`, made the production default (the judge a
    new run takes), with the recording's evidence mode."""
    Judge.objects.filter(is_default=True).update(is_default=False)
    judge, _ = Judge.objects.update_or_create(
        name=recorded_judge_name(recorded),
        defaults={
            "backend": Judge.Backend.OPENAI_COMPATIBLE,
            "base_url": base_url,
            "model": recorded.display_name[:200],
            "api_key_variable": "",
            "evidence_mode": recorded.header.get("evidence_mode") or "quote",
            "temperature": 0.0,
            "samples": 1,
            "is_default": True,
            # The recorded model ran on the recording machine (llama.cpp, its header says): no price per
            # token, so the demo's summary gives its cost as 0, said as such, not as unknown.
            "prompt_price": 0,
            "cached_prompt_price": 0,
            "completion_price": 0,
        },
    )
    return judge


def judge_default_clear() -> None:
    """No named judge is the default: new runs take the environment's (the bundled local model)."""
    Judge.objects.filter(is_default=True).update(is_default=False)


def runs_not_recorded(*, run_ids: Iterable[int]) -> list[JudgeRun]:
    """The runs among `run_ids` that failed because the replay server had no answer for their request."""
    return list(JudgeRun.objects.filter(pk__in=list(run_ids), status=JudgeRun.Status.FAILED,
                                        error__contains=NOT_RECORDED).select_related("recording"))  # fmt: skip
