"""The rubric's guarantee settings: agreement_target, agreement_risk and agreement_tolerance, in the YAML (read,
checked, written back), carried to a new version, and refused outside their range by the database too."""

from __future__ import annotations

import pytest
from django.db import IntegrityError

from rubrics.models import Rubric
from rubrics.rubric_file import RubricFileError, rubric_spec_dump, rubric_spec_of, rubric_spec_parse
from rubrics.services import rubric_import, rubric_new_version
from tests.test_rubric_file import VALID


def test_defaults_and_values_are_read_and_written_back():
    spec = rubric_spec_parse(VALID)
    assert (spec.agreement_target, spec.agreement_risk, spec.agreement_tolerance) == (0.9, 0.1, "exact")
    assert "agreement" not in rubric_spec_dump(spec)  # the defaults are left out, as the other policies' are

    text = VALID.replace(
        "name: Care", "name: Care\nagreement_target: 0.85\nagreement_risk: 0.05\nagreement_tolerance: within_one"
    )
    spec = rubric_spec_parse(text)
    assert (spec.agreement_target, spec.agreement_risk, spec.agreement_tolerance) == (0.85, 0.05, "within_one")
    assert rubric_spec_parse(rubric_spec_dump(spec)) == spec


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("agreement_target: 1", "line 3: 'agreement_target' must be strictly between 0 and 1, got 1.0"),
        ("agreement_risk: 0", "line 3: 'agreement_risk' must be strictly between 0 and 1, got 0.0"),
        ("agreement_tolerance: close", "line 3: the rubric: unknown agreement_tolerance 'close' (use one of: exact, within_one)"),
    ],
)
def test_bad_values_are_refused_naming_the_field(line, message):
    with pytest.raises(RubricFileError) as error:
        rubric_spec_parse(VALID.replace("name: Care", f"name: Care\n{line}"))
    assert str(error.value) == message


@pytest.mark.django_db
def test_a_new_version_keeps_them_and_the_database_refuses_a_target_of_one():
    text = VALID.replace("name: Care", "name: Care\nagreement_target: 0.8\nagreement_tolerance: within_one")
    first = rubric_import(spec=rubric_spec_parse(text), publish=True)
    draft = rubric_new_version(rubric=first)
    assert (draft.agreement_target, draft.agreement_risk, draft.agreement_tolerance) == (0.8, 0.1, "within_one")
    assert rubric_spec_of(draft).agreement_target == 0.8
    with pytest.raises(IntegrityError):
        Rubric.objects.filter(pk=draft.pk).update(agreement_target=1.0)
