"""Workspaces, memberships and the scope every view asks (access.scope.scope_for)."""

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.db.models import Q

from access.models import DEFAULT_WORKSPACE, Membership, Role, Team, Workspace
from access.scope import scope_for
from access.services import member_add, member_remove, workspace_create


@pytest.mark.django_db
def test_a_first_install_has_the_default_workspace_and_the_agents_group():
    assert Workspace.objects.filter(slug=DEFAULT_WORKSPACE).exists()
    assert Group.objects.filter(name="Agents").exists()


@pytest.mark.django_db
def test_a_role_gives_its_groups_capabilities_and_losing_it_takes_them_away():
    user = User.objects.create_user("ana")
    mine = Group.objects.create(name="Operators' own")
    user.groups.add(mine)
    acme = workspace_create(slug="acme", name="ACME")
    member_add(user=user, workspace=acme, role=Role.QA_LEAD)
    assert set(user.groups.values_list("name", flat=True)) == {"Supervisors", "QA leads", "Operators' own"}
    assert User.objects.get(pk=user.pk).has_perm("reviews.run_calibration")
    member_add(user=user, workspace=acme, role=Role.SUPERVISOR, teams=["north"])
    assert set(user.groups.values_list("name", flat=True)) == {"Supervisors", "Operators' own"}
    assert Team.objects.filter(workspace=acme, name="north").exists()
    member_remove(user=user, workspace=acme)
    assert list(user.groups.values_list("name", flat=True)) == ["Operators' own"]


@pytest.mark.django_db
def test_an_unknown_role_or_an_agent_without_id_is_refused_and_stores_nothing():
    user = User.objects.create_user("ana")
    acme = workspace_create(slug="acme")
    with pytest.raises(Exception, match="Unknown role 'boss'"):
        member_add(user=user, workspace=acme, role="boss")
    with pytest.raises(Exception, match="agent id"):
        member_add(user=user, workspace=acme, role=Role.AGENT)
    assert not Membership.objects.filter(user=user).exists()


@pytest.mark.django_db
def test_the_scope_is_one_query_per_request_and_says_what_each_role_sees(django_assert_num_queries):
    acme, other = workspace_create(slug="acme"), workspace_create(slug="other")
    supervisor = User.objects.create_user("sup")
    member_add(user=supervisor, workspace=acme, role=Role.SUPERVISOR, teams=["north", "south"])
    member_add(user=supervisor, workspace=other, role=Role.AGENT, agent_id="a-7")
    supervisor = User.objects.get(pk=supervisor.pk)
    with django_assert_num_queries(1):
        scope = scope_for(supervisor)
        assert scope_for(supervisor) is scope  # kept on the user for the rest of the request
    assert scope.workspace_ids == {acme.pk, other.pk}
    assert scope.role_in(acme.pk) == Role.SUPERVISOR
    expected = (
        Q(pk__in=[])
        | (Q(workspace=acme.pk) & Q(team__in=["north", "south"]))
        | (Q(workspace=other.pk) & Q(agent_id="a-7"))
    )
    assert scope.recordings_q() == expected
    assert scope.workspaces_q() == Q(workspace__in=sorted([acme.pk, other.pk]))

    nobody = User.objects.create_user("nobody")
    assert Membership.objects.none().filter(scope_for(nobody).workspaces_q("workspace")).count() == 0
    assert scope_for(nobody).recordings_q() == Q(pk__in=[])
    root = User.objects.create_superuser("root", "root@example.com", "pw")
    assert scope_for(root).recordings_q() == Q()


@pytest.mark.django_db
def test_the_commands_make_a_workspace_and_a_member_and_name_what_is_wrong(capsys):
    User.objects.create_user("ana")
    call_command("create_workspace", "acme", "--name", "ACME Collections")
    call_command("add_member", "ana", "--workspace", "acme", "--role", "supervisor", "--team", "north")
    assert "ana is Supervisor in acme (north)." in capsys.readouterr().out
    with pytest.raises(CommandError, match="No workspace 'nope'"):
        call_command("add_member", "ana", "--workspace", "nope", "--role", "supervisor")
    with pytest.raises(CommandError, match="No user 'bob'"):
        call_command("add_member", "bob", "--workspace", "acme", "--role", "supervisor")
    with pytest.raises(CommandError, match="slug"):
        call_command("create_workspace", "not a slug")
    assert list(Workspace.objects.values_list("slug", flat=True)) == ["acme", DEFAULT_WORKSPACE]


@pytest.mark.django_db(transaction=True)
def test_existing_people_become_members_of_the_default_workspace_with_the_role_their_groups_give():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("access", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        # The model as it was then: today's would also ask for the rubrics that hang on a workspace.
        executor.loader.project_state(before).apps.get_model("access", "Workspace").objects.all().delete()
        groups = {name: Group.objects.get_or_create(name=name)[0] for name in ("Supervisors", "QA leads", "Rubric owners")}
        people = {
            "sup": ["Supervisors"], "lead": ["QA leads", "Supervisors"], "owner": ["Rubric owners"],
            "both": ["Rubric owners", "Supervisors"], "none": [],
        }
        for name, names in people.items():
            User.objects.create_user(name).groups.set([groups[g] for g in names])
        User.objects.create_superuser("root", "root@example.com", "pw")
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    roles = dict(Membership.objects.filter(workspace__slug=DEFAULT_WORKSPACE).values_list("user__username", "role"))
    assert roles == {"sup": "supervisor", "lead": "qa_lead", "owner": "rubric_owner", "both": "admin"}
