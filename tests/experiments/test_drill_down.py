"""From a criterion to its recordings: the human reference beside every arm's answer, read as the comparison reads them."""

from __future__ import annotations

import pytest

from calibration.selectors import CallSelection
from calibration.services import agreed_value_set, calibration_close, calibration_create
from experiments.selectors import experiment_comparison, experiment_criterion_rows
from experiments.services import ArmSpec, experiment_create
from rubrics.services import rubric_new_version
from tests.experiments.conftest import human_values
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_each_recording_shows_the_human_value_the_stored_baseline_and_the_candidate(
    reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    rubric = next(iter(reviewed.values())).rubric
    rubric_new_version(rubric=rubric)
    # A closed calibration session agreed c1 = 3 on call 0 (its supervisor said 1): the agreed value is the reference.
    lead = UserFactory(username="lead", groups=["QA leads"])
    supervisors = [UserFactory(username=name, groups=["Supervisors"]) for name in ("ana", "ben")]
    session = calibration_create(
        name="March", rubric=rubric, lead=lead, participants=supervisors,
        selection=CallSelection(recording_ids=(reviewed[0].pk,)),
    )  # fmt: skip
    calibration_close(session=session, user=lead)
    agreed_value_set(session=session, recording_id=reviewed[0].pk, criterion_key="c1", value=3, not_applicable=False,
                     note="", user=lead)  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec(rubric_version=2)])

    rows = {row.recording.pk: row for row in experiment_criterion_rows(experiment, "c1")}

    assert len(rows) == 30
    for index, recording in reviewed.items():
        row, human = rows[recording.pk], human_values(index)["c1"]
        baseline, candidate = row.answers
        assert baseline.value == human + 2 and baseline.verified  # production's stored score
        assert candidate.value == human and candidate.rationale == "Shown."  # the fake LLM answers like the supervisor
        if index == 0:
            assert (row.human.value, row.human.source) == (3, "agreed")
        else:
            assert (row.human.value, row.human.source) == (human, "review")
    # The comparison reads the same references: on call 0 the candidate (1) is 2 from the agreed 3,
    # the baseline (3) is exact, so the candidate's c1 is off by 2 once in 30.
    c1 = experiment_comparison(experiment).arms[1].criteria[0]
    assert c1.criterion_key == "c1" and c1.n == 30 and c1.mae == pytest.approx(2 / 30)


def test_the_drill_down_is_paginated_and_page_two_shows_the_rest(
    reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks, client, monkeypatch
):
    from experiments import views

    monkeypatch.setattr(views, "CRITERION_PAGE_SIZE", 20)
    rubric_new_version(rubric=next(iter(reviewed.values())).rubric)
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec(rubric_version=2)])
    client.force_login(UserFactory(groups=["Supervisors"]))
    url = f"/experiments/{experiment.pk}/criteria/c1/"
    names = {recording.pk: str(recording) for recording in reviewed.values()}
    in_order = [names[pk] for pk in sorted(names)]

    first = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    second = client.get(f"{url}?page=2", HTTP_ACCEPT_LANGUAGE="es").content.decode()

    assert [name for name in in_order if f"<td>{name}</td>" in first] == in_order[:20]
    assert "Page 1 of 2 (30 rows)" in first and 'href="?page=2"' in first
    assert [name for name in in_order if f"<td>{name}</td>" in second] == in_order[20:]
    assert "Página 2 de 2 (30 filas)" in second and 'href="?page=1"' in second
    # Each row still shows the supervisor's value and every arm's answer.
    assert second.count("Shown.") == 10 and second.count('class="verified"') == 20
