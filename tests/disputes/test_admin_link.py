"""The admin links a person to an agent id: a membership with role Agent in the workspace's page puts them in
the Agents group, and they see that agent's calls."""

from __future__ import annotations

import pytest

from access.models import Membership
from tests.disputes.conftest import reviewed_call
from tests.factories import UserFactory
from tests.review.conftest import client_for


@pytest.mark.django_db
def test_an_admin_links_a_user_to_an_agent_id(care, workspace, sup):
    admin = client_for(UserFactory(is_superuser=True, is_staff=True))
    carla = UserFactory(username="carla")
    page = admin.get(f"/admin/access/workspace/{workspace.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {key: value for key, value in form.initial.items() if isinstance(value, str)}
    data |= {"slug": workspace.slug, "name": workspace.name}
    for formset in page.context["inline_admin_formsets"]:
        prefix = formset.formset.prefix
        data |= {f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"}
        if formset.formset.model is Membership:
            existing = list(formset.formset.queryset)
            data[f"{prefix}-TOTAL_FORMS"] = str(len(existing) + 1)
            data[f"{prefix}-INITIAL_FORMS"] = str(len(existing))
            for index, membership in enumerate([*existing, None]):
                row = {"id": membership.pk if membership else "", "workspace": workspace.pk,
                       "user": membership.user_id if membership else carla.pk,
                       "role": membership.role if membership else "agent",
                       "agent_id": membership.agent_id if membership else "agent-carla"}  # fmt: skip
                data |= {f"{prefix}-{index}-{key}": value for key, value in row.items()}
    answer = admin.post(f"/admin/access/workspace/{workspace.pk}/change/", data)
    assert answer.status_code == 302, answer.context and answer.context["adminform"].form.errors
    assert list(carla.groups.values_list("name", flat=True)) == ["Agents"]
    call = reviewed_call(care, "agent-carla", sup)
    assert client_for(carla).get(f"/me/calls/{call.pk}/").status_code == 200
