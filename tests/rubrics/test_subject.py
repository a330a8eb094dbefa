"""Whose behaviour a criterion judges (`subject`): in the rubric file, the admin, the rubric API
and new versions; `any` by default, so rubrics written before it keep their meaning."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from rubrics.models import Criterion, Rubric
from rubrics.rubric_file import RubricFileError, rubric_spec_parse
from rubrics.selectors import rubric_diff
from rubrics.services import rubric_import, rubric_new_version, rubric_publish
from tests.api.conftest import api, api_key  # noqa: F401
from tests.factories import CriterionExceptionFactory, CriterionFactory, RubricFactory
from tests.test_admin import owner_client, rubric_form

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "rubrics"
FILE = """\
slug: care
name: Care
criteria:
  - key: greets
    title: Greets
    subject: agent
    description: The agent greets.
  - key: explains
    title: Explains the request
    subject: customer
    description: The customer says why they call.
  - key: ends
    title: Ends
    description: The call ends.
"""


def test_the_file_round_trips_the_subject_and_leaves_the_default_out(tmp_path):
    (tmp_path / "care.yaml").write_text(FILE)
    call_command("import_rubric", str(tmp_path / "care.yaml"), stdout=StringIO())
    rubric = Rubric.objects.get(slug="care")
    assert dict(rubric.criteria.values_list("key", "subject")) == {"greets": "agent", "explains": "customer", "ends": "any"}

    out = StringIO()
    call_command("export_rubric", "care", stdout=out)
    exported = out.getvalue()
    assert exported.count("subject: agent") == 1 and exported.count("subject: customer") == 1
    assert "subject: any" not in exported  # a file without subjects exports as it was written
    assert rubric_spec_parse(exported) == rubric_spec_parse(FILE)


def test_an_unknown_subject_names_its_line():
    with pytest.raises(RubricFileError) as caught:
        rubric_spec_parse(FILE.replace("subject: customer", "subject: supervisor"))
    assert str(caught.value) == (
        "line 10: criterion 'explains': unknown subject 'supervisor' (use one of: agent, customer, any)"
    )


def test_every_sample_criterion_judges_the_agent():
    for path in sorted(SAMPLES.glob("*.yaml")):
        spec = rubric_spec_parse(path.read_text(encoding="utf-8"))
        assert {criterion.subject for criterion in spec.criteria} == {"agent"}, path.name


def test_a_new_version_keeps_it_and_the_diff_shows_a_change():
    first = rubric_import(spec=rubric_spec_parse(FILE), publish=True)
    draft = rubric_new_version(rubric=first)
    assert dict(draft.criteria.values_list("key", "subject")) == dict(first.criteria.values_list("key", "subject"))

    Criterion.objects.filter(rubric=draft, key="ends").update(subject="agent")

    [change] = rubric_diff(rubric=draft).changed
    assert (change.key, change.fields) == ("ends", ["subject"])


def test_the_rubric_api_says_whose_behaviour(api):  # noqa: F811
    rubric_import(spec=rubric_spec_parse(FILE), publish=True)

    body = api.get("/api/rubrics/care/").json()

    assert [(c["key"], c["subject"]) for c in body["criteria"]] == [
        ("greets", "agent"), ("explains", "customer"), ("ends", "any")
    ]  # fmt: skip


def test_a_rubric_owner_sets_it_in_the_admin(client):
    client = owner_client(client)
    rubric = CriterionExceptionFactory(criterion=CriterionFactory(rubric=RubricFactory(slug="care"))).criterion.rubric
    url = reverse("admin:rubrics_rubric_change", args=[rubric.pk])
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert 'name="criteria-0-subject"' in page
    assert ">Agente<" in page
    assert "Whose behaviour" in client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    response = client.post(url, rubric_form(rubric, **{"criteria-0-subject": "agent"}))

    assert response.status_code == 302
    assert rubric.criteria.get().subject == Criterion.Subject.AGENT
    refused = client.post(url, rubric_form(rubric, **{"criteria-0-subject": "boss"}))
    assert refused.status_code == 200 and rubric.criteria.get().subject == Criterion.Subject.AGENT


def test_existing_criteria_keep_any():
    criterion = CriterionFactory()
    assert Criterion.objects.get(pk=criterion.pk).subject == "any"
    assert rubric_publish(rubric=criterion.rubric).criteria.get().subject == "any"
