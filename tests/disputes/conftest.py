import pytest
from django.core.management import call_command

from access.models import DEFAULT_WORKSPACE, Workspace
from access.services import member_add
from reviews.services import CriterionAdjustment, review_create
from tests.factories import UserFactory, judged_recording, published_rubric


@pytest.fixture
def care(db):
    return published_rubric(slug="care", not_applicable=("c3",))


@pytest.fixture
def workspace(db):
    return Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})[0]


def agent_user(username: str, agent_id: str):
    call_command("create_agent_user", agent_id, username, "--password", "pass-word-123", "--email", f"{username}@example.com")
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)


@pytest.fixture
def ana(workspace):
    return agent_user("ana", "agent-ana")


@pytest.fixture
def bruno(workspace):
    return agent_user("bruno", "agent-bruno")


@pytest.fixture
def sup(db, workspace):
    user = UserFactory(username="sup", groups=["Supervisors"], email="sup@example.com")
    member_add(user=user, workspace=workspace, role="supervisor")
    return user


@pytest.fixture
def lead(db, workspace):
    user = UserFactory(username="lead", email="lead@example.com")
    member_add(user=user, workspace=workspace, role="qa_lead")
    return user


def reviewed_call(rubric, agent_id: str, supervisor, values=None, **fields):
    """A judged call of the agent, approved by the supervisor as judged (c1=4, c2=4, c3=4 by default)."""
    recording = judged_recording(rubric=rubric, agent_id=agent_id, agent_name=agent_id.title(), values=values, **fields)
    review_create(recording=recording, decision="approve", reviewer=supervisor.username, user=supervisor)
    return recording


def adjusted_review(recording, supervisor, key: str, value: int):
    return review_create(
        recording=recording,
        decision="approve",
        reviewer=supervisor.username,
        user=supervisor,
        criteria=[CriterionAdjustment(criterion_key=key, adjusted_value=value, comment="heard it")],
        replace_final=True,
    )

