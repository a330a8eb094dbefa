"""Reads for acknowledgements and disputes: who may see which, what waits for whom, and the windows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from access import Capability, may
from access.querysets import ScopePaths
from access.scope import scope_for
from qa.models import Recording
from disputes.models import Acknowledgement, Dispute, DisputedCriterion
from reviews.models import Review
from reviews.reference import FINAL_DECISIONS, latest_reviews, review_values
from reviews.selectors import ReviewPage, agent_recordings, review_page


def dispute_window_closes(review: Review) -> datetime:
    """Until when the agent may dispute a final review (QA_DISPUTE_DAYS after it was made)."""
    return review.created_at + timedelta(days=settings.QA_DISPUTE_DAYS)


def acknowledgement_due(review: Review) -> datetime:
    """When an unacknowledged final review becomes overdue (QA_ACKNOWLEDGE_DAYS after it was made)."""
    return review.created_at + timedelta(days=settings.QA_ACKNOWLEDGE_DAYS)


def standing_reviews() -> QuerySet[Review]:
    """Each call's latest final review: the one the human reference reads, and the one an agent acknowledges
    and disputes (an earlier one no longer stands)."""
    return latest_reviews(decisions=FINAL_DECISIONS)


def standing_review_of(recording: Recording) -> Review | None:
    return standing_reviews().filter(recording=recording).select_related("user").first()


def leading(user: AbstractBaseUser, path: str = "recording__") -> Q:
    """The calls (reached through `path`) of the workspaces where `user` resolves disputes (their scope,
    access.scope, narrowed to where their role carries the capability)."""
    return scope_for(user).where(Capability.RESOLVE_DISPUTES).rows_q(ScopePaths.of_calls(path))


def disputes_visible_to(user: AbstractBaseUser) -> QuerySet[Dispute]:
    """A QA lead's every dispute of their workspaces; an agent's own (their calls'); nobody else's."""
    scope = scope_for(user)
    if may(user, Capability.RESOLVE_DISPUTES):
        return Dispute.objects.visible_to(scope.where(Capability.RESOLVE_DISPUTES))
    if may(user, Capability.DISPUTE):
        return Dispute.objects.visible_to(scope.as_agent())
    return Dispute.objects.none()


def with_criteria(disputes: QuerySet[Dispute]) -> QuerySet[Dispute]:
    """What a dispute's page, its API answer and its webhook read, in three queries."""
    return disputes.select_related("recording", "review", "assigned_to", "resolved_by").prefetch_related(
        Prefetch("criteria", queryset=DisputedCriterion.objects.select_related("criterion"))
    )


def dispute_list(*, user: AbstractBaseUser, status: str = "") -> QuerySet[Dispute]:
    """Open ones by due date first; resolved ones newest first."""
    disputes = with_criteria(disputes_visible_to(user))
    if status:
        disputes = disputes.filter(status=status)
    return disputes.order_by("status", "due_at", "-id") if status == Dispute.Status.OPEN else disputes


def dispute_detail(*, user: AbstractBaseUser, pk: int) -> Dispute:
    """Raises Dispute.DoesNotExist for one the user may not see, as for one that does not exist."""
    return dispute_list(user=user).select_related("review__user", "resolution").get(pk=pk)


@dataclass(frozen=True)
class Waiting:
    """What waits for the reader, for the top bar: how many, and the page that lists them."""

    count: int
    url_name: str


def waiting_for(user: AbstractBaseUser) -> Waiting | None:
    """An agent: final reviews to acknowledge and dispute outcomes not yet read. A QA lead: open disputes
    assigned to them or to any lead. A supervisor: open disputes of their reviews. Two queries at most."""
    if may(user, Capability.DISPUTE):
        own = agent_recordings(user)
        to_acknowledge = (
            standing_reviews().filter(recording__in=own, acknowledgement__isnull=True).exclude(
                Exists(Dispute.objects.filter(review=OuterRef("pk")))
            )
        ).count()
        outcomes = Dispute.objects.filter(
            recording__in=own, status=Dispute.Status.RESOLVED, outcome_seen_at__isnull=True
        ).count()
        return Waiting(to_acknowledge + outcomes, "agents:home")
    if may(user, Capability.RESOLVE_DISPUTES):
        count = Dispute.objects.filter(
            Q(assigned_to=user) | Q(assigned_to__isnull=True), leading(user), status=Dispute.Status.OPEN
        ).count()
        return Waiting(count, "disputes:list")
    if may(user, Capability.REVIEW):
        count = Dispute.objects.filter(review__user=user, status=Dispute.Status.OPEN).count()
        return Waiting(count, "disputes:reviews")
    return None


@dataclass(frozen=True)
class ReviewStanding:
    """A final review with what its agent did: acknowledged (when, comment), overdue, disputed."""

    review: Review
    acknowledgement: Acknowledgement | None
    overdue: bool
    dispute: Dispute | None


def reviews_followed_by(*, user: AbstractBaseUser, status: str = "", limit: int = 200) -> list[ReviewStanding]:
    """The standing final reviews of agents' calls, newest first: a supervisor's own reviews, a QA lead's
    every review. `status`: "acknowledged", "waiting" (not yet, not overdue), "overdue" or "disputed"."""
    reviews = standing_reviews().exclude(recording__agent_id="").select_related("recording", "user")
    if not may(user, Capability.RESOLVE_DISPUTES):
        reviews = reviews.filter(user=user)
    else:
        reviews = reviews.filter(leading(user))
    overdue_before = timezone.now() - timedelta(days=settings.QA_ACKNOWLEDGE_DAYS)
    has_dispute = Exists(Dispute.objects.filter(review=OuterRef("pk")))
    if status == "acknowledged":
        reviews = reviews.filter(acknowledgement__isnull=False)
    elif status == "disputed":
        reviews = reviews.filter(has_dispute)
    elif status in ("waiting", "overdue"):
        reviews = reviews.filter(acknowledgement__isnull=True).exclude(has_dispute)
        reviews = reviews.filter(
            created_at__lt=overdue_before) if status == "overdue" else reviews.filter(created_at__gte=overdue_before)
    rows = list(reviews.order_by("-created_at", "-id")[:limit])
    acknowledgements = {a.review_id: a for a in Acknowledgement.objects.filter(review__in=rows)}
    disputes = {d.review_id: d for d in Dispute.objects.filter(review__in=rows)}
    return [
        ReviewStanding(
            review=review,
            acknowledgement=acknowledgements.get(review.pk),
            overdue=review.pk not in acknowledgements and review.pk not in disputes and review.created_at < overdue_before,
            dispute=disputes.get(review.pk),
        )
        for review in rows
    ]


def upheld_dispute_recordings() -> QuerySet[Recording]:
    """Calls with an upheld dispute: a QA lead found the agent right on at least one criterion (the
    experiments' `disputed` group)."""
    return Recording.objects.filter(
        disputes__status=Dispute.Status.RESOLVED, disputes__criteria__outcome=DisputedCriterion.Outcome.UPHELD
    ).distinct()


@dataclass(frozen=True)
class CriterionLine:
    """One criterion of a call as an agent or a lead reads it: the judge's word, the review's, the dispute's."""

    number: int
    criterion: Any
    score: Any  # qa.models.Score or None
    entry: Any  # the standing review's CriterionReview, or None
    human: int | None  # the standing review's value (review_values' rule)
    human_not_applicable: bool
    disputed: DisputedCriterion | None


@dataclass(frozen=True)
class CallView:
    page: ReviewPage
    review: Review | None  # the final review that stands, if any
    lines: list[CriterionLine]
    dispute: Dispute | None  # the call's latest dispute, of whichever review
    acknowledgement: Acknowledgement | None
    window_closes: datetime | None
    may_dispute: bool  # the standing review is disputable now (final, in time, not disputed, not a resolution)

    @property
    def open_dispute(self) -> Dispute | None:
        return self.dispute if self.dispute is not None and self.dispute.status == Dispute.Status.OPEN else None


def call_view(*, recording: Recording, user: AbstractBaseUser, review: Review | None = None) -> CallView:
    """A judged call with its standing final review (or `review`: the lead's page shows the review disputed)
    and its dispute, for the agent's call page and the lead's dispute page (the review page's reading of
    transcript and evidence, reused)."""
    page = review_page(recording_id=recording.pk, user=user)
    standing = next((r for r in page.reviews if r.is_final), None)
    review = next((r for r in page.reviews if review is not None and r.pk == review.pk), standing)
    entries = {}
    humans: dict[str, dict] = {}
    if review is not None:
        entries = {entry.criterion_id: entry for entry in review.criteria.all()}
        humans = {row["key"]: row for row in review_values(reviews=Review.objects.filter(pk=review.pk))}
    dispute = (
        Dispute.objects.filter(recording=recording)
        .select_related("resolved_by", "assigned_to", "review")
        .prefetch_related(Prefetch("criteria", queryset=DisputedCriterion.objects.select_related("criterion")))
        .order_by("-created_at", "-id")
        .first()
    )
    disputed = {entry.criterion_id: entry for entry in dispute.criteria.all()} if dispute is not None else {}
    acknowledgement = Acknowledgement.objects.filter(review=review).first() if review is not None else None
    closes = dispute_window_closes(review) if review is not None else None
    may_dispute = bool(
        review is not None
        and review is standing
        and not review.from_dispute
        and timezone.now() <= closes
        and not (dispute is not None and dispute.review_id == review.pk)
    )
    lines = [
        CriterionLine(
            number=number,
            criterion=view.criterion,
            score=view.score,
            entry=entries.get(view.criterion.pk),
            human=humans.get(view.criterion.key, {}).get("human"),
            human_not_applicable=bool(humans.get(view.criterion.key, {}).get("not_applicable")),
            disputed=disputed.get(view.criterion.pk),
        )
        for number, view in enumerate(page.criteria, start=1)
    ]
    return CallView(page, review, lines, dispute, acknowledgement, closes, may_dispute)


def agent_calls(*, user: AbstractBaseUser, limit: int = 100) -> list[dict]:
    """The agent's judged calls, newest first, each with its standing review, acknowledgement and dispute."""
    calls = list(
        agent_recordings(user)
        .filter(current_run__isnull=False)
        .select_related("rubric")
        .defer("transcript", "turns")
        .order_by("-occurred_at", "-id")[:limit]
    )
    reviews = {review.recording_id: review for review in standing_reviews().filter(recording__in=calls)}
    acknowledged = set(Acknowledgement.objects.filter(review__in=reviews.values()).values_list("review_id", flat=True))
    disputes: dict[int, Dispute] = {}
    for dispute in Dispute.objects.filter(recording__in=calls).order_by("created_at", "id"):
        disputes[dispute.recording_id] = dispute  # the latest stays
    return [
        {
            "recording": call,
            "review": reviews.get(call.pk),
            "acknowledged": call.pk in reviews and reviews[call.pk].pk in acknowledged,
            "dispute": disputes.get(call.pk),
        }
        for call in calls
    ]
