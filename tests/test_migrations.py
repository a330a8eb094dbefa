from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command


@pytest.mark.django_db
def test_models_and_migrations_agree():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db
def test_the_role_groups_come_with_fitting_permissions():
    owners = set(Group.objects.get(name="Rubric owners").permissions.values_list("codename", flat=True))
    supervisors = set(Group.objects.get(name="Supervisors").permissions.values_list("codename", flat=True))
    assert {"change_rubric", "change_criterion", "add_criterionexception", "view_score"} <= owners
    assert "add_review" not in owners
    assert {"add_review", "view_recording", "view_score", "view_rubric"} <= supervisors
    assert not {"change_rubric", "change_criterion", "delete_rubric"} & supervisors
