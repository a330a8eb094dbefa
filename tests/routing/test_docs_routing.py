"""docs/user/routing-guarantee.md as written: its command certifies the sample rubric's day and prints the table;
its numbers are the defaults and the simulation's."""

from __future__ import annotations

import pytest

from rubrics.models import Rubric
from rubrics.rubric_file import rubric_spec_parse
from rubrics.services import rubric_import
from tests.routing.test_thresholds import reviewed_call
from tests.support.docs import doc_text, docs_blocks
from tests.test_docs import ROOT, run_block

PAGE = "docs/user/routing-guarantee.md"


@pytest.mark.django_db
def test_the_pages_command_prints_the_table():
    spec = rubric_spec_parse((ROOT / "samples" / "rubrics" / "customer-care.yaml").read_text(encoding="utf-8"))
    rubric = rubric_import(spec=spec, publish=True)
    keys = list(rubric.criteria.values_list("key", flat=True))
    for _ in range(22):  # the fewest pairs the page says can certify, all agreeing
        reviewed_call(rubric, confidence=dict.fromkeys(keys, 0.9), human=dict.fromkeys(keys, 4), reasons=["random_audit"])
    [block] = docs_blocks(doc_text(PAGE))
    printed = run_block(block.code)
    assert "customer-care v1: unreviewed values agree with a supervisor (exact) at least 90% of the time" in printed
    lines = [line for line in printed.splitlines() if line.split()[:1] and line.split()[0] in keys]
    assert len(lines) == len(keys) and all(line.endswith("certified") and " 22 " in line for line in lines)


def test_the_pages_defaults_are_the_rubrics():
    text = doc_text(PAGE)
    for name in ("agreement_target", "agreement_risk", "agreement_tolerance"):
        default = Rubric._meta.get_field(name).default
        assert f"| `{name}` | {default if name != 'agreement_tolerance' else '`exact`'} |" in text
    assert "at least 22" in text
