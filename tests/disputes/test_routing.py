"""Who a dispute goes to (QA_DISPUTE_ROUTING), and the experiments' `disputed` group from a script."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from access.services import member_add
from disputes.selectors import waiting_for
from disputes.services import CriterionResolution, DisputedValue, dispute_open, dispute_resolve
from experiments.services import experiment_create, ArmSpec
from core.errors import InvalidInputError
from tests.disputes.conftest import reviewed_call
from tests.factories import UserFactory


@pytest.mark.django_db
@pytest.mark.parametrize("routing", ["qa_leads", "reviewer_lead"])
def test_a_dispute_goes_to_any_lead_or_to_the_reviewers_lead(care, ana, workspace, settings, routing):
    settings.QA_DISPUTE_ROUTING = routing
    reviewer = UserFactory(username="rev")
    member_add(user=reviewer, workspace=workspace, role="supervisor", teams=["cards"])
    theirs = UserFactory(username="cards-lead")
    member_add(user=theirs, workspace=workspace, role="qa_lead", teams=["cards"])
    other = UserFactory(username="loans-lead")
    member_add(user=other, workspace=workspace, role="qa_lead", teams=["loans"])
    call = reviewed_call(care, "agent-ana", reviewer, team="cards")  # a call of the reviewer's team
    dispute = dispute_open(review=call.reviews.get(), user=ana, criteria=[DisputedValue("c1", 2, reason="No.")])
    if routing == "reviewer_lead":
        assert dispute.assigned_to == theirs
        assert (waiting_for(theirs).count, waiting_for(other).count) == (1, 0)
    else:
        assert dispute.assigned_to is None
        assert (waiting_for(theirs).count, waiting_for(other).count) == (1, 1)
    assert waiting_for(reviewer).count == 1  # a dispute of their review


@pytest.mark.django_db
def test_the_experiment_command_takes_the_disputed_group(care, ana, sup, lead, capsys):
    call = reviewed_call(care, "agent-ana", sup)
    reviewed_call(care, "agent-ana", sup)
    dispute = dispute_open(review=call.reviews.get(), user=ana, criteria=[DisputedValue("c1", 2, reason="No.")])
    dispute_resolve(dispute=dispute, user=lead, resolutions=[CriterionResolution("c1", "upheld", "Yes.")])
    experiment = experiment_create(
        rubric_slug="care", candidates=[ArmSpec(rubric_version=care.version)], group="disputed", publish=False
    )
    assert sorted({item.recording_id for arm in experiment.arms.all() for item in arm.items.all()}) == [call.pk]
    with pytest.raises(InvalidInputError):
        experiment_create(rubric_slug="care", candidates=[ArmSpec(rubric_version=care.version)], group="nope")
    with pytest.raises(CommandError, match="'disputed'"):  # a choice of the command's --group
        call_command("experiment", "--rubric", "care", "--candidate-version", "1", "--group", "nope")
