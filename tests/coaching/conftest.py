import pytest

from access.services import member_add
from tests.disputes.conftest import agent_user, care, lead, sup, workspace  # noqa: F401  (fixtures)
from tests.factories import UserFactory, judged_recording


@pytest.fixture
def ana(workspace):  # noqa: F811
    return agent_user("ana", "agent-ana")


@pytest.fixture
def bruno(workspace):  # noqa: F811
    return agent_user("bruno", "agent-bruno")


@pytest.fixture
def sales_sup(db, workspace):  # noqa: F811
    """A supervisor of the sales team only."""
    user = UserFactory(username="sales-sup", groups=["Supervisors"], email="sales@example.com")
    member_add(user=user, workspace=workspace, role="supervisor", teams=["sales"])
    return user


def unverified(recording, key: str):
    score = recording.current_run.scores.get(criterion__key=key)
    score.evidence_verified = False
    score.verification_status = "not_found"
    score.save(update_fields=["evidence_verified", "verification_status"])
    return score


@pytest.fixture
def ana_calls(care):  # noqa: F811
    """Ana's calls in support: c1 values 1..5 (the 1 unverified), c2 all 4."""
    calls = [
        judged_recording(rubric=care, agent_id="agent-ana", agent_name="Ana", team="support", values={"c1": v, "c2": 4})
        for v in (1, 2, 3, 4, 5)
    ]
    unverified(calls[0], "c1")
    return calls
