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

    All in the plain stratum but a3's flagged call. Reviewed calls count with their human value; the others
    with the judge's, corrected by their stratum's audit.
    a1: known 5·3 + 5·4 = 35; ten 2s corrected by its own audit (−0.5) → (35 + 10 · 1.5) / 20 = 2.5.
    a2: 4 audited, too few: the team's correction, (5·(−1) + 4·(−4)) / 14 = −1.5: known 4 · 1, two 5s
        → 3.5 each: (4 + 7) / 6 = 11/6.
    a3: no audit in south: the rubric's plain correction, the same 14 calls → 3 − 1.5 = 1.5 for each of the
        three 3s; the flagged call is known (1): (1 + 4.5) / 4 = 1.375.
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
    difference −1 on those 10. Known: those 10 (2 each; N/A on either side is no number); the three 5s are
    estimated at 4: (20 + 12) / 13.
    Overall per call, (1·share(c1) + 3·share(c2)) / 4 over the criteria with a value, shares of 1–5 in %:
    judge 75 (c2 N/A) ×5, 56.25 (c2 3) ×12, 93.75 (c2 5) ×3 → mean 1331.25 / 20 = 66.5625;
    human 75 ×2 (c2 none), 75 ×2 (c2 N/A), 37.5 ×10 → mean 675 / 14; differences 0 ×2, +18.75 ×2,
    −18.75 ×10 → −150 / 14. Known: the 14 audited (675); estimated: the six others (75 ×3, 93.75 ×3, sum
    506.25), each corrected by −150/14: (675 + 506.25 − 6 · 150/14) / 20.
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
