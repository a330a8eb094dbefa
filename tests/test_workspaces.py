"""Workspaces, memberships and the scope every view asks (access.scope.scope_for)."""

import re

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
    with pytest.raises(CommandError, match="No workspace 'nope'"):
        call_command("add_member", "carla", "--workspace", "nope", "--role", "supervisor")
    assert not User.objects.filter(username="carla").exists()  # nothing made for a refused command
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


def test_the_role_a_persons_groups_give_is_the_workspaces_migrations():
    """access.models.role_of_groups (what the test factories give a person in role groups) decides as the
    frozen copy in access 0002 did, for every combination of the three groups that existed then."""
    import importlib
    from itertools import combinations

    from access.models import role_of_groups

    frozen = importlib.import_module("access.migrations.0002_default_workspace").role_for
    names = ("Supervisors", "QA leads", "Rubric owners")
    for groups in (set(chosen) for size in range(len(names) + 1) for chosen in combinations(names, size)):
        assert role_of_groups(groups) == frozen(groups), groups
    assert role_of_groups({"Agents"}) == Role.AGENT  # the Agents group came with the migration: no one was in it


@pytest.mark.django_db(transaction=True)
def test_existing_rubrics_calls_keys_and_experiments_go_into_the_default_workspace_with_their_teams():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from access.models import ApiKey
    from qa.models import Recording
    from experiments.models import Experiment
    from rubrics.models import Rubric

    before = [("rubrics", "0004_sections_and_critical_criteria"), ("qa", "0016_recording_search_vector"), ("experiments", "0004_job_lease")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps
        rubric = old.get_model("rubrics", "Rubric").objects.create(name="Old", slug="old", status="published")
        for number, team in enumerate(["north", "north", "south", ""]):
            old.get_model("qa", "Recording").objects.create(
                external_id=f"c-{number}", source="crm", rubric=rubric, team=team, transcript="AGENT: hola",
                content_hash="x", review_reasons=[],
            )  # fmt: skip
        old.get_model("qa", "ApiKey").objects.create(name="crm", source="crm", prefix="abcd1234", key_hash="x")
        old.get_model("experiments", "Experiment").objects.create(rubric_slug="old")
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    default = Workspace.objects.get(slug=DEFAULT_WORKSPACE)
    assert Rubric.objects.get(slug="old").workspace == default
    assert set(Recording.objects.values_list("workspace__slug", flat=True)) == {DEFAULT_WORKSPACE}
    assert ApiKey.objects.get(name="crm").workspace == default
    assert Experiment.objects.get(rubric_slug="old").workspace == default
    assert set(Team.objects.filter(workspace=default).values_list("name", flat=True)) == {"north", "south"}


def two_workspaces():
    from tests.factories import judged_recording, published_rubric

    acme, other = workspace_create(slug="acme", name="Acme"), workspace_create(slug="other", name="Other")
    calls = {}
    for workspace in (acme, other):
        rubric = published_rubric(slug=f"{workspace.slug}-care", name=f"{workspace.slug.upper()}-RUBRIC", workspace=workspace)
        for team in ("north", "south"):
            calls[(workspace.slug, team)] = judged_recording(
                rubric=rubric, team=team, agent_id=f"{workspace.slug}-{team}", external_id=f"{workspace.slug}-{team}",
                status="in_review", needs_review=True, review_reasons=["low_confidence"],
            )  # fmt: skip
    return acme, other, calls


@pytest.mark.django_db
def test_a_supervisor_in_one_workspace_who_leads_qa_in_another_reviews_and_calibrates_only_where_they_may(client):
    from django.core.exceptions import PermissionDenied

    from reviews.models import CalibrationSession
    from calibration.selectors import CallSelection
    from calibration.services import calibration_close, calibration_create
    from reviews.services import review_create

    acme, other, calls = two_workspaces()
    ana = User.objects.create_user("ana", password="pass-word-123")
    member_add(user=ana, workspace=acme, role=Role.SUPERVISOR, teams=["north"])
    member_add(user=ana, workspace=other, role=Role.QA_LEAD)
    peers = [User.objects.create_user(name) for name in ("p1", "p2")]
    for peer in peers:
        member_add(user=peer, workspace=acme, role=Role.SUPERVISOR)
        member_add(user=peer, workspace=other, role=Role.SUPERVISOR)
    ana = User.objects.get(pk=ana.pk)

    # Calibration: she leads other's, not acme's (where she only supervises).
    acme_rubric, other_rubric = calls[("acme", "north")].rubric, calls[("other", "north")].rubric
    selection = CallSelection()
    with pytest.raises(Exception, match="may not run calibration"):
        calibration_create(name="x", rubric=acme_rubric, lead=ana, participants=peers, selection=selection)
    session = calibration_create(name="y", rubric=other_rubric, lead=ana, participants=peers, selection=selection)
    acme_session = CalibrationSession.objects.create(name="acme's", rubric=acme_rubric, lead=peers[0])
    acme_session.participants.set(peers)
    with pytest.raises(PermissionDenied):
        calibration_close(session=acme_session, user=User.objects.get(pk=ana.pk))
    calibration_close(session=session, user=User.objects.get(pk=ana.pk))
    client.force_login(ana)
    assert client.get(f"/calibrations/{acme_session.pk}/").status_code == 404
    assert client.post(f"/calibrations/{acme_session.pk}/close/").status_code == 404
    create_page = client.get("/calibrations/new/").content.decode()
    assert "OTHER-RUBRIC" in create_page and "ACME-RUBRIC" not in create_page

    # Review: acme's north is hers, acme's south is not (nor is it on any of her pages).
    assert client.get(f"/review/{calls[('acme', 'south')].pk}/").status_code == 404
    assert client.get(f"/review/{calls[('acme', 'north')].pk}/").status_code == 200
    queue = client.get("/review/").content.decode()
    assert "acme-north" in queue and "acme-south" not in queue and "other-south" in queue
    with pytest.raises(PermissionDenied):
        review_create(recording=calls[("acme", "south")], decision="approve", reviewer="ana", user=ana)
    review_create(recording=calls[("acme", "north")], decision="approve", reviewer="ana", user=ana)


@pytest.mark.django_db
def test_a_staff_member_sees_only_their_workspaces_rows_in_the_admin_and_a_superuser_all(client):
    from django.urls import reverse

    acme, other, calls = two_workspaces()
    staff = User.objects.create_user("staff", password="pass-word-123", is_staff=True)
    member_add(user=staff, workspace=acme, role=Role.ADMIN)
    staff.user_permissions.add(*__import__("django.contrib.auth.models", fromlist=["Permission"]).Permission.objects.filter(
        codename__in=["view_recording", "view_rubric", "view_score", "view_apikey", "view_workspace", "view_judgerun"]
    ))  # fmt: skip
    client.force_login(staff)
    for name in ("qa_recording", "rubrics_rubric", "qa_score", "qa_judgerun", "access_workspace"):
        page = client.get(reverse(f"admin:{name}_changelist")).content.decode()
        assert "OTHER-RUBRIC" not in page and "other-north" not in page, name
    assert client.get(reverse("admin:qa_recording_change", args=[calls[("other", "north")].pk])).status_code == 302
    assert "acme-north" in client.get(reverse("admin:qa_recording_changelist")).content.decode()
    workspaces = client.get(reverse("admin:access_workspace_changelist")).content.decode()
    assert "Acme" in workspaces and ">Other<" not in workspaces
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    assert "other-north" in client.get(reverse("admin:qa_recording_changelist")).content.decode()


@pytest.mark.django_db
def test_keys_rubrics_and_splitting_by_command(capsys):
    from access.models import ApiKey
    from qa.models import Recording
    from experiments.models import Experiment
    from rubrics.models import Rubric

    acme, other, calls = two_workspaces()
    call_command("create_api_key", "acme-crm", "--workspace", "acme")
    assert ApiKey.objects.get(name="acme-crm").workspace == acme
    call_command("create_api_key", "plain")
    assert ApiKey.objects.get(name="plain").workspace.slug == DEFAULT_WORKSPACE
    with pytest.raises(CommandError, match="No workspace 'nope'"):
        call_command("create_api_key", "x", "--workspace", "nope")

    Experiment.objects.create(workspace=acme, rubric_slug="acme-care")
    call_command("create_workspace", "acme-south")
    call_command("move_rubric", "acme-care", "--to", "acme-south")
    assert "Moved acme-care and its 2 calls to acme-south." in capsys.readouterr().out
    moved = Workspace.objects.get(slug="acme-south")
    assert set(Rubric.objects.filter(slug="acme-care").values_list("workspace", flat=True)) == {moved.pk}
    assert set(Recording.objects.filter(rubric__slug="acme-care").values_list("workspace", flat=True)) == {moved.pk}
    assert Experiment.objects.get(rubric_slug="acme-care").workspace == moved
    assert set(moved.teams.values_list("name", flat=True)) == {"north", "south"}
    with pytest.raises(CommandError, match="No rubric nope"):
        call_command("move_rubric", "nope", "--to", "acme-south")


@pytest.mark.django_db
def test_import_rubric_puts_a_new_family_in_its_workspace_and_refuses_another_workspaces_slug(tmp_path):
    from rubrics.models import Rubric

    workspace_create(slug="acme")
    workspace_create(slug="other")
    path = tmp_path / "care.yaml"
    path.write_text(
        "slug: care\nname: Care\nlanguage: es\ncriteria:\n  - key: greets\n    title: Greets\n"
        "    description: The agent greets the customer by name.\n"
    )
    call_command("import_rubric", str(path), "--workspace", "acme")
    assert Rubric.objects.get(slug="care").workspace.slug == "acme"
    with pytest.raises(CommandError, match="belongs to another workspace"):
        call_command("import_rubric", str(path), "--workspace", "other")
    with pytest.raises(CommandError, match="No workspace 'nope'"):
        call_command("import_rubric", str(path), "--workspace", "nope")


@pytest.mark.django_db
def test_one_rubric_file_starts_the_rubrics_of_two_workspaces_under_new_slugs(tmp_path, capsys):
    from rubrics.models import Rubric

    workspace_create(slug="acme")
    workspace_create(slug="other")
    path = tmp_path / "care.yaml"
    path.write_text(
        "slug: care\nname: Care\nlanguage: es\ncriteria:\n  - key: greets\n    title: Greets\n"
        "    description: The agent greets the customer by name.\n"
    )
    call_command("import_rubric", str(path), "--workspace", "acme", "--slug", "acme-care", "--publish")
    call_command("import_rubric", str(path), "--workspace", "other", "--slug", "other-care")
    assert "Imported" in capsys.readouterr().out
    rubrics = {rubric.slug: rubric for rubric in Rubric.objects.all()}
    assert set(rubrics) == {"acme-care", "other-care"}
    assert (rubrics["acme-care"].workspace.slug, rubrics["acme-care"].status) == ("acme", Rubric.Status.PUBLISHED)
    assert (rubrics["other-care"].workspace.slug, rubrics["other-care"].version) == ("other", 1)
    assert list(rubrics["other-care"].criteria.values_list("key", flat=True)) == ["greets"]
    # A slug that is not one is refused by name, and nothing is stored.
    with pytest.raises(CommandError, match="“Other Care” is not a slug"):
        call_command("import_rubric", str(path), "--workspace", "other", "--slug", "Other Care")
    assert Rubric.objects.count() == 2


@pytest.mark.django_db
def test_a_key_posts_only_to_its_workspaces_rubrics_and_an_external_id_is_per_workspace():
    from rest_framework.test import APIClient

    from qa.api.services import api_key_create
    from qa.models import Recording

    acme, other, calls = two_workspaces()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {api_key_create(name='crm', workspace=other)[1]}")
    body = {"external_id": "acme-north", "source": "crm", "transcript": "AGENTE: hola\nCLIENTE: buenas\n"}
    refused = client.post("/api/recordings/", {**body, "rubric": "acme-care"}, format="json")
    assert refused.status_code == 400 and "rubric" in refused.json()
    # The same source and external id as a call of acme's: another workspace's is another call.
    Recording.objects.filter(pk=calls[("acme", "north")].pk).update(source="crm")
    stored = client.post("/api/recordings/", {**body, "rubric": "other-care", "team": "east"}, format="json")
    assert stored.status_code == 201, stored.content
    assert Recording.objects.get(pk=stored.json()["id"]).workspace == other
    assert Team.objects.filter(workspace=other, name="east").exists()  # a real team, made on ingest
    assert client.get(f"/api/recordings/{calls[('acme', 'north')].pk}/").status_code == 404


def readme_commands(block: int) -> list[list[str]]:
    """The `python manage.py ...` lines of the workspaces page's sh block number `block`."""
    import re
    import shlex

    from tests.support.docs import docs_section

    section = docs_section("docs/operations/workspaces.md", "Workspaces, teams and roles")
    code = re.findall(r"```sh\n(.*?)```", section, re.S)[block]
    return [shlex.split(line.split("#", 1)[0])[2:] for line in code.splitlines() if line.startswith("python manage.py")]


@pytest.mark.django_db
def test_the_readmes_workspace_commands_run_as_written(tmp_path, monkeypatch, capsys):
    from access.models import ApiKey
    from rubrics.models import Rubric

    for name in ("ana", "luis", "marta"):
        User.objects.create_user(name)
    (tmp_path / "care.yaml").write_text(
        "slug: care\nname: Care\nlanguage: es\ncriteria:\n  - key: greets\n    title: Greets\n"
        "    description: The agent greets the customer by name.\n    evidence_guidance: Quote the greeting.\n"
    )
    monkeypatch.chdir(tmp_path)
    for command, *args in readme_commands(0):
        call_command(command, *args)
    acme = Workspace.objects.get(slug="acme")
    assert dict(acme.memberships.values_list("user__username", "role")) == {
        "ana": "supervisor", "luis": "qa_lead", "marta": "agent"
    }  # fmt: skip
    assert set(Membership.objects.get(user__username="ana").teams.values_list("name", flat=True)) == {"north", "south"}
    assert ApiKey.objects.get(name="acme-crm").workspace == acme
    assert Rubric.objects.get(slug="care").workspace == acme and Rubric.objects.get(slug="care").status == "published"


@pytest.mark.django_db
def test_the_readmes_split_runs_as_written():
    from qa.models import Recording
    from tests.factories import judged_recording, published_rubric

    User.objects.create_user("ana")
    rubric = published_rubric(slug="acme-care")
    assert rubric.workspace.slug == DEFAULT_WORKSPACE  # where everything is after the upgrade
    judged_recording(rubric=rubric, team="north")
    for command, *args in readme_commands(1):
        call_command(command, *args)
    acme = Workspace.objects.get(slug="acme")
    assert Recording.objects.get().workspace == acme
    assert Membership.objects.get(user__username="ana", workspace=acme).role == Role.SUPERVISOR
    assert scope_for(User.objects.get(username="ana")).contains_recording(Recording.objects.get())


@pytest.mark.django_db
def test_add_member_creates_a_missing_user_with_a_password_shown_once(capsys):
    from django.test import Client

    call_command("create_workspace", "acme", "--name", "ACME Collections")
    call_command("add_member", "bob", "--workspace", "acme", "--role", "qa_lead", "--email", "bob@example.com")
    printed = capsys.readouterr().out
    assert "bob is QA lead in acme (every team)." in printed
    password = re.search(r"New user bob, password \(shown once\): (\S+)", printed).group(1)
    bob = User.objects.get(username="bob")
    assert bob.email == "bob@example.com" and bob.check_password(password)
    assert Membership.objects.get(user=bob).workspace.slug == "acme"
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.post("/accounts/login/", {"username": "bob", "password": password})
    assert client.session.get("_auth_user_id") == str(bob.pk)
    # An existing user keeps their password, and none is printed.
    call_command("add_member", "bob", "--workspace", DEFAULT_WORKSPACE, "--role", "supervisor")
    assert "password" not in capsys.readouterr().out
    bob.refresh_from_db()
    assert bob.check_password(password)


@pytest.mark.django_db
def test_a_membership_alone_opens_its_roles_pages_without_any_global_group(client):
    """What a person may do comes from their memberships (access.backends.MembershipBackend), as what they may
    see does: the global groups user_groups_sync keeps in step are no longer what opens a page."""
    acme, other, calls = two_workspaces()
    ana = User.objects.create_user("ana", password="pass-word-123")
    Membership.objects.create(user=ana, workspace=acme, role=Role.SUPERVISOR)  # no member_add: no group given
    lead = User.objects.create_user("lead", password="pass-word-123")
    Membership.objects.create(user=lead, workspace=other, role=Role.QA_LEAD)
    agent = User.objects.create_user("agent", password="pass-word-123")
    Membership.objects.create(user=agent, workspace=acme, role=Role.AGENT, agent_id="acme-north")
    nobody = User.objects.create_user("nobody", password="pass-word-123")
    assert not Group.objects.filter(user__in=[ana, lead, agent, nobody]).exists()

    client.force_login(ana)
    queue = client.get("/review/")
    assert queue.status_code == 200
    page = queue.content.decode()
    assert 'href="/review/"' in page  # the top bar's link reads the same permissions
    assert "acme-north" in page and "acme-south" in page and "other-north" not in page  # her scope
    assert client.get("/calls/").status_code == 200 and client.get("/api/calls/").status_code == 200
    assert client.get("/disputes/").status_code == 403  # a supervisor resolves no disputes

    client.force_login(lead)
    assert client.get("/disputes/").status_code == 200
    assert client.get("/calibrations/new/").status_code == 200

    client.force_login(agent)
    mine = client.get("/me/")
    assert mine.status_code == 200
    assert client.get("/review/").status_code == 403

    client.force_login(nobody)  # no membership, no group: nothing opens
    assert client.get("/review/").status_code == 403 and client.get("/api/calls/").status_code == 403


@pytest.mark.django_db
def test_visible_to_is_one_door_for_every_scoped_model_along_its_declared_paths():
    """Each model whose rows belong to a workspace declares its paths once (`scope_paths`); visible_to applies
    the scope along them: a team-limited supervisor gets their team's calls and the rows of those calls, a
    workspace's rows (rubrics, subscriptions) by workspace, an agent only their own calls."""
    from django.apps import apps

    from access.querysets import ScopedQuerySet
    from access.scope import scope_for_key
    from qa.models import JudgeRun, Recording, Score
    from reviews.models import Review
    from reviews.services import review_create
    from rubrics.models import Rubric

    acme, other, calls = two_workspaces()
    north = calls[("acme", "north")]
    ana = User.objects.create_user("ana")
    member_add(user=ana, workspace=acme, role=Role.SUPERVISOR, teams=["north"])
    ana = User.objects.get(pk=ana.pk)
    for call in calls.values():
        review_create(recording=call, decision="approve", reviewer="someone")
    scope = scope_for(ana)

    assert set(Recording.objects.visible_to(scope)) == {north}
    assert set(JudgeRun.objects.visible_to(scope).values_list("recording", flat=True)) == {north.pk}
    assert set(Score.objects.visible_to(scope).values_list("run__recording", flat=True)) == {north.pk}
    assert set(Review.objects.visible_to(scope).values_list("recording", flat=True)) == {north.pk}
    assert set(Rubric.objects.visible_to(scope)) == {north.rubric}  # a workspace's row: every team sees it

    agent = User.objects.create_user("agent")
    member_add(user=agent, workspace=other, role=Role.AGENT, agent_id="other-south")
    agent = User.objects.get(pk=agent.pk)
    assert set(Recording.objects.visible_to(scope_for(agent))) == {calls[("other", "south")]}
    assert set(Recording.objects.visible_to(scope_for(agent).as_agent())) == {calls[("other", "south")]}
    assert not Recording.objects.visible_to(scope_for(ana).as_agent()).exists()  # she is no agent

    # Every scoped model's declared paths reach real fields: each door answers a query, of one workspace.
    scoped = [model for model in apps.get_models() if isinstance(model.objects.all(), ScopedQuerySet)]
    assert {model.__name__ for model in scoped} >= {
        "Recording", "JudgeRun", "Score", "Transcription", "Review", "Rubric", "CalibrationSession", "CalibrationCall",
        "Experiment", "Dispute", "Subscription", "Delivery",
    }  # fmt: skip
    from access.models import ApiKey

    key = ApiKey(workspace=other, source="crm", all_sources=False)
    for model in scoped:  # a path that names no field raises FieldError here
        list(model.objects.visible_to(scope_for_key(key)).values_list("pk", flat=True))
        list(model.objects.visible_to(scope).values_list("pk", flat=True))
    assert not Recording.objects.visible_to(scope_for_key(key)).exists()  # other's calls, none from crm
