"""An event's `data`: the same JSON the API gives for the object it is about, built by the API's own
serializers (GET /api/recordings/{id}/ for a recording, the review as POST .../review/ answers it,
GET /api/experiments/{id}/ for an experiment, GET /api/disputes/{id}/ for a dispute).

Built when the event is fanned out (by the drain, within about a second of the commit), not inside
the judging's transaction: serializing a recording with its scores costs milliseconds of CPU that the judging
would otherwise pay for every subscribed judgment (bench/pipeline/README.md). Every attempt and
redelivery then sends those same bytes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.http import QueryDict

from outbox.models import Event
from reviews.api.serializers import RecordingWithReviewsSerializer, ReviewSerializer
from disputes.api import DisputeSerializer
from disputes.selectors import with_criteria
from experiments.api import ExperimentSerializer
from experiments.models import Experiment
from experiments.selectors import experiment_comparison
from disputes.models import Dispute
from coaching.api import CoachingSessionSerializer
from coaching.models import CoachingSession
from reviews.models import Review
from reviews.selectors import recording_detail_with_reviews, review_detail


class _LinksBase:
    """What DRF's `reverse` reads of a request to make a link absolute: links start with
    QA_PUBLIC_URL where it is set, else they are paths on the app."""

    GET = QueryDict()
    versioning_scheme = None

    def build_absolute_uri(self, location: str) -> str:
        base = settings.QA_PUBLIC_URL
        return urljoin(base.rstrip("/") + "/", location.lstrip("/")) if base else location


def event_data(*, event: Event) -> dict[str, Any] | None:
    """The `data` of an event's deliveries: the object's API JSON (see the module's docstring), or
    None when it no longer exists (nothing is sent then). For a dispute, GET /api/disputes/{id}/'s;
    the envelope's `recording` names the recording disputed (outbox.services.dispute_opened_emit)."""
    context = {"request": _LinksBase()}
    try:
        if event.subject_type == Event.Subject.RECORDING:
            return dict(RecordingWithReviewsSerializer(recording_detail_with_reviews(pk=event.subject_id), context=context).data)
        if event.subject_type == Event.Subject.REVIEW:
            return dict(ReviewSerializer(review_detail(pk=event.subject_id), context=context).data)
        if event.subject_type == Event.Subject.EXPERIMENT:
            experiment = Experiment.objects.get(pk=event.subject_id)
            return dict(ExperimentSerializer(experiment_comparison(experiment), context=context).data)
        if event.subject_type == Event.Subject.COACHING:
            return dict(CoachingSessionSerializer(CoachingSession.objects.get(pk=event.subject_id)).data)
        if event.subject_type == Event.Subject.DISPUTE:
            return dict(DisputeSerializer(with_criteria(Dispute.objects.all()).get(pk=event.subject_id)).data)
    except (
        Review.DoesNotExist, Experiment.DoesNotExist, Dispute.DoesNotExist, CoachingSession.DoesNotExist,
        RecordingWithReviewsSerializer.Meta.model.DoesNotExist,
    ):  # fmt: skip
        return None
    return {"id": event.subject_id}
