"""A QA lead, three supervisors and judged calls to calibrate on."""

from __future__ import annotations

import pytest

from qa.models import Recording
from calibration.selectors import CallSelection
from calibration.services import CalibrationAnswer, calibration_create, calibration_entry_save
from reviews.models import CalibrationSession
from tests.factories import UserFactory, judged_recording, published_rubric


@pytest.fixture
def lead(db):
    return UserFactory(username="lead", groups=["QA leads"])


@pytest.fixture
def supervisors(db):
    return [UserFactory(username=name, groups=["Supervisors"]) for name in ("ana", "ben", "eva")]


@pytest.fixture
def cal_rubric(db):
    """c1, c2 on 1–5; c2 may not apply."""
    return published_rubric(criteria=2, not_applicable=("c2",), slug="care")


@pytest.fixture
def calls(cal_rubric) -> list[Recording]:
    """Four judged calls; the judge gave c1 = 1, 2, 3, 4 and c2 = 3."""
    return [judged_recording(rubric=cal_rubric, values={"c1": n, "c2": 3}) for n in (1, 2, 3, 4)]


@pytest.fixture
def session(lead, supervisors, cal_rubric, calls) -> CalibrationSession:
    return calibration_create(
        name="March",
        rubric=cal_rubric,
        lead=lead,
        participants=supervisors,
        selection=CallSelection(recording_ids=tuple(call.pk for call in calls)),
    )


def answers(c1: int, c2: int | None) -> list[CalibrationAnswer]:
    """c2 None: "does not apply"."""
    return [CalibrationAnswer("c1", c1), CalibrationAnswer("c2", c2, not_applicable=c2 is None)]


def score(session, user, recording, c1: int, c2: int | None = 3, comment: str = ""):
    return calibration_entry_save(
        session=session, recording_id=recording.pk, participant=user, answers=answers(c1, c2), comment=comment
    )
