"""Reads for the review queue and the review page, each in a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.db.models import (
    Count,
    Exists,
    F,
    Field,
    Func,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.functions import Cast
from django.db.models.lookups import GreaterThan, LessThan
from django.shortcuts import get_object_or_404
from django.utils import timezone

from access import Capability, may
from access.models import Role
from access.scope import Scope, role_permissions, scope_for
from qa.models import QUALITY_ORDER_KEY, QUEUE_ORDER_KEY, JudgeRun, Recording, Score
from qa.selectors import recording_details
from reviews.filters import CallSelection
from reviews.reference import latest_final_reviews, review_values
from reviews.models import Assignment, CalibrationSession, CriterionReview, Review
from reviews.transcript import TurnView, transcript_turns
from rubrics.selectors import rubrics_in
from rubrics.models import Criterion, Rubric
from rubrics.quality import NOT_APPLICABLE, Quality, quality_score
from rubrics.quality import Value as QualityValue
from rubrics.selectors import rubric_quality_policy

Reason = Recording.ReviewReason


@dataclass(frozen=True)
class QueueFilters(CallSelection):
    reason: str = ""
    sort: str = ""  # "": lowest confidence first; QUALITY_SORT: lowest quality score first


QUALITY_SORT = "quality"


def queue_order_key(filters: QueueFilters):  # noqa: ANN201 (a query expression)
    """The queue's sort key: the lowest confidence, or with `sort=quality` the judge's quality score (both
    with an index, qa.models)."""
    return QUALITY_ORDER_KEY if filters.sort == QUALITY_SORT else QUEUE_ORDER_KEY


def is_blind_audit(recording: Recording) -> bool:
    """In review only because it was drawn at random: the reviewer must not see the model first."""
    return recording.status == Recording.Status.IN_REVIEW and recording.review_reasons == [Reason.RANDOM_AUDIT]


def blind_recordings_for(user: AbstractBaseUser) -> QuerySet[Recording]:
    """The recordings whose judgment `user` must not see, anywhere (pages, API, CSV): for someone who
    reviews, those in review only as a random audit that they have not reviewed yet on this judgment; for
    anyone, those in an open calibration session they take part in. Blindness keeps a reviewer's value
    independent of the judge's, so a rubric owner or a QA lead who does not review is not blind to an
    audit, and keys (external systems) are never blind. The one definition of blindness;
    `recording_is_blind_for` asks it of one call."""
    audit = Q(status=Recording.Status.IN_REVIEW, review_reasons=[Reason.RANDOM_AUDIT]) & ~Exists(
        Review.objects.filter(recording=OuterRef("pk"), run=OuterRef("current_run"), user=user)
    )
    if not may(user, Capability.REVIEW):
        audit = Q(pk__in=[])
    calibrating = Exists(
        CalibrationSession.objects.filter(
            status=CalibrationSession.Status.OPEN, participants=user, calls__recording=OuterRef("pk")
        )
    )
    return Recording.objects.filter(audit | calibrating)


def recording_is_blind_for(*, recording: Recording, user: AbstractBaseUser) -> bool:
    return blind_recordings_for(user).filter(pk=recording.pk).exists()


def queue_recordings(
    *, filters: QueueFilters, scope: Scope, user: AbstractBaseUser | None = None
) -> QuerySet[Recording]:
    """Recordings in `scope` waiting for review, lowest confidence of their current judgment first
    (those without one last, then by id); each carries its `queue_key`.

    With `user`, leave out those another supervisor holds an active claim on.
    """
    recordings = _queue_filtered(filters, scope)
    if filters.reason:
        recordings = recordings.filter(has_reason(filters.reason))
    if user is not None:
        recordings = recordings.filter(
            Q(claim__isnull=True) | Q(claim__expires_at__lte=timezone.now()) | Q(claim__user=user)
        )
    # The queue shows no transcript: leaving it (and the turns) out keeps the rows narrow.
    return (
        recordings.select_related("rubric", "claim__user")
        .defer("transcript", "turns")
        .annotate(queue_key=queue_order_key(filters))
        .order_by("queue_key", "id")
    )


@dataclass(frozen=True)
class QueuePosition:
    """Where a call stands in queue order, written `<queue key>_<id>` in page links."""

    key: float
    id: int

    def __str__(self) -> str:
        return f"{self.key!r}_{self.id}"

    @classmethod
    def of(cls, recording: Recording) -> QueuePosition:
        return cls(key=recording.queue_key, id=recording.pk)

    @classmethod
    def parse(cls, text: str | None) -> QueuePosition | None:
        """The position a link carries; None for a missing or mangled one (the queue starts over)."""
        key, _, pk = (text or "").partition("_")
        try:
            return cls(key=float(key), id=int(pk))
        except ValueError:
            return None


@dataclass(frozen=True)
class QueuePage:
    recordings: list[Recording]
    total: int  # every call matching the filters, not just this page
    previous: QueuePosition | None  # the link to the page before: calls before this position
    next: QueuePosition | None  # the link to the page after: calls after this position


def queue_page(
    *,
    filters: QueueFilters,
    scope: Scope,
    size: int,
    after: QueuePosition | None = None,
    before: QueuePosition | None = None,
) -> QueuePage:
    """A page of the queue: the first, the `size` calls after `after`, or the `size` calls before `before`.

    Pages are cut by position (keyset) rather than by offset, so PostgreSQL starts each one with a
    range on the queue's index: a deep page costs what the first does. A page whose calls have
    all left the queue meanwhile falls back to the first.
    """
    recordings = queue_recordings(filters=filters, scope=scope)
    total = recordings.count()
    if before is not None:
        # The page's ids alone first: PostgreSQL estimates a row comparison by its first column, and
        # with many calls tied at the lowest confidence it expects none before, and picks a join plan
        # that reads every earlier row, where the ids alone are one backward index range.
        nearest = recordings.filter(_before(before)).order_by("-queue_key", "-id").values("id")[: size + 1]
        rows = list(recordings.filter(id__in=nearest))
        if rows:
            more = len(rows) > size
            rows = rows[-size:]
            return QueuePage(rows, total, QueuePosition.of(rows[0]) if more else None, QueuePosition.of(rows[-1]))
    elif after is not None:
        rows = list(recordings.filter(_after(after))[: size + 1])
        if rows:
            following = QueuePosition.of(rows[size - 1]) if len(rows) > size else None
            return QueuePage(rows[:size], total, QueuePosition.of(rows[0]), following)
    rows = list(recordings[: size + 1])
    return QueuePage(rows[:size], total, None, QueuePosition.of(rows[size - 1]) if len(rows) > size else None)


class _Row(Func):
    """A row value, `(a, b)`: compared as a whole, it is one range an index on the same columns can serve,
    where its expansion with OR makes PostgreSQL filter every earlier row."""

    template = "(%(expressions)s)"
    output_field = Field()


def _after(position: QueuePosition) -> GreaterThan:
    return GreaterThan(_Row(F("queue_key"), F("id")), _Row(Value(position.key), Value(position.id)))


def _before(position: QueuePosition) -> LessThan:
    return LessThan(_Row(F("queue_key"), F("id")), _Row(Value(position.key), Value(position.id)))


def queue_reason_counts(*, filters: QueueFilters, scope: Scope) -> dict[str, int]:
    """How many recordings matching the filters are in review for each reason (one query).

    The reason filter is left out here, so each count says what choosing
    that reason would show.
    """
    return _queue_filtered(filters, scope).aggregate(
        **{reason: Count("id", filter=has_reason(reason)) for reason in Reason.values}
    )


# A call on its way to a judgment: the queue counts these, so that an empty queue says whether more is coming
# (the first run's --live demo judges its calls while the app serves). A call merely received waits for
# nothing here: the samples the demo did not judge stay received until someone asks for them.
BEING_JUDGED = (Recording.Status.TRANSCRIBING, Recording.Status.QUEUED, Recording.Status.JUDGING)


def queue_being_judged_count(*, scope: Scope) -> int:
    """How many calls `scope` sees are being transcribed, waiting for the judge or being judged."""
    return Recording.objects.visible_to(scope).filter(status__in=BEING_JUDGED).count()


def queue_assigned(*, filters: QueueFilters, user: AbstractBaseUser) -> QuerySet[Recording]:
    """The calls of the queue (with its filters) that a lead assigned to `user` and that are still theirs
    to review (calls), in the order they were assigned: the queue shows them first, and
    `queue_next` opens them before any other. A call someone else holds a claim on is left out."""
    open_here = Assignment.objects.filter(recording=OuterRef("pk"), assignee=user, closed_at__isnull=True)
    return (
        queue_recordings(filters=filters, scope=scope_for(user), user=user)
        .filter(Exists(open_here))
        .annotate(assigned_at=Subquery(open_here.values("created_at")[:1]))
        .order_by("assigned_at", "id")
    )


def queue_next(*, after: Recording | None, filters: QueueFilters, user: AbstractBaseUser) -> Recording | None:
    """The queue item following `after` in queue order (the first one without it) that `user` may claim:
    a call assigned to `user` first, in the order assigned; after the last of those, the queue from its start.
    Past the queue's end it starts again from the top, so a call left waiting above `after` (one this
    supervisor opened and left, say) is offered rather than "no more calls" beside a queue that lists it."""
    assigned = queue_assigned(filters=filters, user=user)
    if after is not None:
        assigned = assigned.exclude(pk=after.pk)
    if (first_assigned := assigned.first()) is not None:
        return first_assigned
    recordings = queue_recordings(filters=filters, scope=scope_for(user), user=user)
    if after is not None and Assignment.objects.filter(recording=after, assignee=user).exists():
        return recordings.exclude(pk=after.pk).first()  # `after` was taken out of order: start over
    if after is not None:
        # Its own position, also once it has left the queue (just reviewed): the next is the one after it.
        key = (
            Recording.objects.filter(pk=after.pk)
            .annotate(queue_key=queue_order_key(filters))
            .values_list("queue_key", flat=True)
        ).first()
        recordings = recordings.exclude(pk=after.pk)
        if key is not None:
            following = recordings.filter(_after(QueuePosition(key=key, id=after.pk))).first()
            return following if following is not None else recordings.first()
    return recordings.first()


def queue_team_choices(*, scope: Scope) -> list[str]:
    return list(
        _queue(scope).exclude(team="").order_by("team").values_list("team", flat=True).distinct()
    )


def rubric_choices(*, scope: Scope) -> list[tuple[str, str]]:
    """(slug, name of its latest version) for every rubric of `scope` recordings can be judged with."""
    latest: dict[str, str] = {}
    for slug, name in (
        rubrics_in(scope).exclude(status=Rubric.Status.DRAFT).order_by("slug", "-version").values_list("slug", "name")
    ):
        latest.setdefault(slug, name)
    return list(latest.items())


def rubric_version_choices(slug: str, *, scope: Scope) -> list[tuple[int, str]]:
    """(version, "v3 · published") for every published or archived version of a rubric, newest first."""
    versions = rubrics_in(scope).filter(slug=slug).exclude(status=Rubric.Status.DRAFT).order_by("-version")
    return [(rubric.version, f"v{rubric.version} · {rubric.get_status_display()}") for rubric in versions]


def latest_reviewed_rubric(*, scope: Scope) -> Rubric | None:
    """The rubric version of the most recent review in `scope`: where a report opens when nothing is chosen."""
    review = (
        Review.objects.filter(scope.recordings_q(workspace="recording__workspace", team="recording__team", agent="recording__agent_id"))
        .select_related("run__rubric")
        .order_by("-created_at", "-pk")
        .first()
    )
    return review.run.rubric if review is not None else None


# --- An agent's own calls: the one place the agent pages, the disputes and their API ask which calls a
# signed-in agent may see.


def agent_ids(user: AbstractBaseUser) -> list[str]:
    """The agent ids `user`'s agent memberships carry (none for anyone who is not an agent)."""
    return sorted({grant.agent_id for grant in scope_for(user).grants if grant.role == Role.AGENT and grant.agent_id})


def agent_recordings(user: AbstractBaseUser) -> QuerySet[Recording]:
    """The calls of `user` as an agent, and no one else's: their scope (access.scope.scope_for) narrowed to
    their agent memberships, so each workspace's agent id counts only in that workspace, and a person who
    is an agent in one workspace and a supervisor in another sees here only their own calls."""
    return Recording.objects.visible_to(scope_for(user).as_agent())


def reasons_text_alias(recordings: QuerySet[Recording]) -> QuerySet[Recording]:
    """The alias `has_reason` reads."""
    return recordings.alias(review_reasons_text=Cast("review_reasons", TextField()))


def _queue(scope: Scope) -> QuerySet[Recording]:
    """The calls waiting for review that `scope` sees."""
    queue = Recording.objects.visible_to(scope).filter(needs_review=True, status=Recording.Status.IN_REVIEW)
    return reasons_text_alias(queue)


def _queue_filtered(filters: QueueFilters, scope: Scope) -> QuerySet[Recording]:
    return _queue(scope).filter(filters.q())


def has_reason(reason: str) -> Q:
    """In review for `reason`, on recordings aliased with `review_reasons_text` (as `reasons_text_alias` does)."""
    # Membership in the JSON list, written as a substring test on its text
    # because SQLite has no JSON `contains`; reasons are fixed identifiers,
    # so the quoted form cannot match anything else.
    return Q(review_reasons_text__contains=f'"{reason}"')



@dataclass(frozen=True)
class CriterionView:
    criterion: Criterion
    score: Score | None  # None when the judge gave no score for it
    latest: CriterionReview | None  # the latest review's entry, if it was given on this run


@dataclass(frozen=True)
class ReviewPage:
    recording: Recording
    run: JudgeRun
    criteria: list[CriterionView]
    turns: list[TurnView]
    reviews: list[Review]  # newest first; the first supersedes the others
    reviewed_by_user: bool  # the viewer already reviewed this judgment
    blind: bool

    @property
    def numbers(self) -> dict[str, int]:
        """Each criterion's place in the rubric by key, as the page numbers criteria and their highlights."""
        return {view.criterion.key: number for number, view in enumerate(self.criteria, start=1)}

    @property
    def final_review(self) -> Review | None:
        """The latest review when it is final: the call is done, and only an explicit new review replaces it."""
        latest = self.reviews[0] if self.reviews else None
        return latest if latest is not None and latest.is_final else None


def review_page(*, recording_id: int, user: AbstractBaseUser) -> ReviewPage:
    """Everything the review page shows about a judged recording, in seven queries (the seventh asks
    blindness's one definition, which also covers an open calibration the user takes part in).

    Blind is lifted for a reviewer who already gave their own review of this
    judgment: after submitting they see the model's scores next to theirs.
    """
    recording = get_object_or_404(
        Recording.objects.filter(scope_for(user).recordings_q()).select_related("rubric", "current_run__judge", "claim__user"),
        pk=recording_id,
        current_run__isnull=False,
    )
    run = recording.current_run
    criteria = list(recording.rubric.criteria.prefetch_related("exceptions"))
    scores = {score.criterion_id: score for score in run.scores.all()}
    reviews = list(
        recording.reviews.select_related("user").prefetch_related(
            Prefetch("criteria", queryset=CriterionReview.objects.select_related("criterion"))
        )
    )
    reviewed_by_user = any(review.user_id == user.pk and review.run_id == run.pk for review in reviews)
    blind = recording_is_blind_for(recording=recording, user=user)
    latest = {}
    if reviews and reviews[0].run_id == run.pk:
        latest = {entry.criterion_id: entry for entry in reviews[0].criteria.all()}
    # Only verified spans are evidence; an unverified quote's spans show
    # what was found elsewhere and must not look like a confirmation.
    spans = {
        criterion.key: scores[criterion.pk].verification_spans
        for criterion in criteria
        if not blind and criterion.pk in scores and scores[criterion.pk].evidence_verified
    }
    # The passage an unverified quote comes closest to, marked differently: where to look, not a confirmation.
    closest = {
        criterion.key: (found["start"], found["end"])
        for criterion in criteria
        if not blind
        and criterion.pk in scores
        and not scores[criterion.pk].evidence_verified
        and (found := scores[criterion.pk].verification_closest)
    }
    return ReviewPage(
        recording=recording,
        run=run,
        criteria=[CriterionView(criterion, scores.get(criterion.pk), latest.get(criterion.pk)) for criterion in criteria],
        turns=transcript_turns(recording.transcript, spans, recording.turns, closest),
        reviews=reviews,
        reviewed_by_user=reviewed_by_user,
        blind=blind,
    )


def recording_detail_with_reviews(*, pk: int) -> Recording:
    """A recording with its latest run, the scores of its current run and its reviews, in five queries.

    Raises Recording.DoesNotExist.
    """
    return recording_details().prefetch_related(Prefetch("reviews", queryset=_reviews())).get(pk=pk)


def review_detail(*, pk: int) -> Review:
    return _reviews().get(pk=pk)


def _reviews() -> QuerySet[Review]:
    return Review.objects.select_related("api_key").prefetch_related(
        Prefetch("criteria", queryset=CriterionReview.objects.select_related("criterion"))
    )


def review_qualities(*, reviews: Iterable[Review], rubric: Rubric) -> dict[int, Quality]:
    """The call's quality score by what each review says (`review_values`: the supervisor's values, N/A, and
    the judge's values they approved), by review id, in one query: reviews of runs judged with `rubric`."""
    ids = [review.pk for review in reviews]
    values: dict[int, dict[str, QualityValue]] = {pk: {} for pk in ids}
    for row in review_values(reviews=Review.objects.filter(pk__in=ids)):
        if row["not_applicable"]:
            values[row["review_id"]][row["key"]] = NOT_APPLICABLE
        elif row["human"] is not None:
            values[row["review_id"]][row["key"]] = row["human"]
    policy = rubric_quality_policy(rubric)
    return {pk: quality_score(policy, values[pk]) for pk in ids}


def review_quality(*, review: Review, rubric: Rubric | None = None) -> Quality:
    """`review_qualities` of one review, on the rubric version its run was judged with (`rubric` when the
    caller has it at hand)."""
    rubric = rubric if rubric is not None and rubric.pk == review.run.rubric_id else review.run.rubric
    return review_qualities(reviews=[review], rubric=rubric)[review.pk]


def latest_final_review(*, recording_id: int) -> Review | None:
    """The recording's latest approve or reject: the one its human values come from."""
    return latest_final_reviews([recording_id]).select_related("run__rubric").first()


def reviewers(scope: Scope) -> QuerySet[AbstractBaseUser]:
    """The active people who may review calls of `scope`'s workspaces (a role there carrying
    access.Capability.REVIEW): those its calls can be assigned to. An unrestricted scope (a superuser's):
    whoever holds the capability anywhere."""
    users = get_user_model().objects.filter(is_active=True)
    if scope.everything:
        app_label, codename = str(Capability.REVIEW).split(".")
        permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename)
        users = users.filter(Q(is_superuser=True) | Q(groups__permissions__in=permission) | Q(user_permissions__in=permission))
    else:
        roles = [role for role in Role.values if str(Capability.REVIEW) in role_permissions(role)]
        users = users.filter(memberships__workspace__in=sorted(scope.workspace_ids), memberships__role__in=roles)
    return users.distinct().order_by("username")
