"""Hand-built calls for the scorecard tests; every expected figure is worked out from the table below."""

from __future__ import annotations

import pytest

from qa.models import Recording
from qa.services import recordings_current_values_store
from rubrics.models import Criterion, Rubric
from tests.factories import judged_recording, published_rubric
from tests.reports.conftest import APPROVE, AUDIT, LOW, add_review, at

NA = "N/A"  # in `human`: the supervisor ticked "does not apply"


def call(
    rubric: Rubric,
    agent: str,
    team: str,
    values: dict[str, int | None],
    *,
    reasons: tuple[str, ...] = (),
    human: dict[str, int | str | None] | None = None,
    day: int = 2,
) -> Recording:
    """A judged call; with `human`, a final review approving it with those values (None: as the judge said)."""
    recording = judged_recording(
        rubric=rubric,
        values=values,
        agent_id=agent,
        agent_name=agent.title(),
        team=team,
        review_reasons=list(reasons),
        occurred_at=at(day),
    )
    # judged_recording scores missing keys as 4; a None in values is the judge's N/A.
    recording.current_run.scores.filter(criterion__key__in=[k for k, v in values.items() if v is None]).update(
        value=None
    )
    recordings_current_values_store(recordings=Recording.objects.filter(pk=recording.pk))
    if human is not None:
        entries = {
            key: {"not_applicable": True} if value == NA else {"adjusted_value": value}
            for key, value in human.items()
            if value is not None
        }
        add_review(recording, APPROVE, when=at(day + 1), entries=entries)
    return recording


@pytest.fixture
def teams_data(db) -> Rubric:
    """Criterion c1 (1–5) only:

    agent  team   calls                                          c1 judge        c1 human
    a1     north  5 audited, supervisor adjusted 4 → 3           4               3
                  5 audited, approved                            4               4
                  10 not audited                                 2               -
    a2     north  4 audited, adjusted 5 → 1                      5               1
                  2 not audited                                  5               -
    a3     south  3 not audited                                  3               -
                  1 flagged (low confidence), adjusted 5 → 1     5               1 (never in the correction)

    a1: judge mean 3, own correction −0.5 (10 audited) → 2.5.
    a2: 4 audited, too few: the team's correction, (5·(−1) + 4·(−4)) / 14 = −1.5 → 5 − 1.5 = 3.5.
    a3: no audit in south: the rubric's correction, the same 14 calls → 3.5 − 1.5 = 2.0.
    """
    rubric = published_rubric(criteria=1, slug="care", name="Care")
    for index in range(10):
        call(rubric, "a1", "north", {"c1": 4}, reasons=(AUDIT,), human={"c1": 3 if index < 5 else None})
        call(rubric, "a1", "north", {"c1": 2})
    for _ in range(4):
        call(rubric, "a2", "north", {"c1": 5}, reasons=(AUDIT,), human={"c1": 1})
    for _ in range(2):
        call(rubric, "a2", "north", {"c1": 5})
    for _ in range(3):
        call(rubric, "a3", "south", {"c1": 3})
    call(rubric, "a3", "south", {"c1": 5}, reasons=(LOW,), human={"c1": 1})
    return rubric


@pytest.fixture
def not_applicable_data(db) -> Rubric:
    """c1 (1–5, weight 1, always 4, approved as it is) and c2 (1–5, weight 3, may be N/A), agent x in team t:

    calls                                      c2 judge   c2 human
    2 audited, approved                        N/A        none (the judge's N/A approved)
    2 audited, supervisor ticked N/A           3          N/A
    10 audited, adjusted 3 → 2                 3          2
    3 not audited                              N/A        -
    3 not audited                              5          -

    c2: judged 15 (N/A left out), mean (12·3 + 3·5) / 15 = 3.4; audited with a human value 10, mean 2;
    difference −1 on those 10 → 2.4, corrected with the cell's own audit.
    Overall per call, (1·share(c1) + 3·share(c2)) / 4 over the criteria with a value, shares of 1–5 in %:
    judge 75 (c2 N/A) ×5, 56.25 (c2 3) ×12, 93.75 (c2 5) ×3 → mean 1331.25 / 20 = 66.5625;
    human 75 ×2 (c2 none), 75 ×2 (c2 N/A), 37.5 ×10 → mean 675 / 14; differences 0 ×2, +18.75 ×2,
    −18.75 ×10 → −150 / 14; estimate 66.5625 − 150 / 14.
    """
    rubric = published_rubric(criteria=2, not_applicable=("c2",), slug="care", name="Care")
    Criterion.objects.filter(rubric=rubric, key="c2").update(weight=3)
    for _ in range(2):
        call(rubric, "x", "t", {"c2": None}, reasons=(AUDIT,), human={})
        call(rubric, "x", "t", {"c2": 3}, reasons=(AUDIT,), human={"c2": NA})
    for _ in range(10):
        call(rubric, "x", "t", {"c2": 3}, reasons=(AUDIT,), human={"c2": 2})
    for _ in range(3):
        call(rubric, "x", "t", {"c2": None})
        call(rubric, "x", "t", {"c2": 5})
    return rubric
