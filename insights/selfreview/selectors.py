"""Reads for self-reviews: whether a call's page is still blind to its agent, the agent's values beside the judge's
and the supervisor's, and how often an agent's own values match the human reference. Only these functions read
self-reviews; the human reference (reviews.reference) never does."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet
from scipy.stats import binomtest

from access.scope import Scope, scope_for
from disputes.models import Acknowledgement, Dispute
from disputes.selectors import CallView
from insights.selfreview.models import SelfReview, SelfReviewValue
from qa.models import Recording
from reviews.reference import human_references
from rubrics.models import Rubric


def _own(user: AbstractBaseUser) -> QuerySet[SelfReview]:
    """The self-reviews of `user` as an agent, on their own calls only."""
    return SelfReview.objects.visible_to(scope_for(user).as_agent()).filter(user=user)


def self_review_of(*, recording: Recording, user: AbstractBaseUser) -> SelfReview | None:
    return (
        _own(user)
        .filter(recording=recording)
        .prefetch_related(Prefetch("values", queryset=SelfReviewValue.objects.select_related("criterion")))
        .first()
    )


def calls_still_blind(*, user: AbstractBaseUser, recording_ids: list[int]) -> set[int]:
    """Those of the agent's calls whose values the agent has not seen: no self-review (given or skipped), and no
    acknowledgement or dispute of theirs (both are made on the page that shows the values)."""
    ids = set(recording_ids)
    seen = set(_own(user).filter(recording_id__in=ids).values_list("recording_id", flat=True))
    seen |= set(
        Acknowledgement.objects.filter(review__recording_id__in=ids, user=user).values_list("review__recording_id", flat=True)
    )
    seen |= set(
        Dispute.objects.visible_to(scope_for(user).as_agent())
        .filter(recording_id__in=ids, opened_by=user)
        .values_list("recording_id", flat=True)
    )
    return ids - seen


def self_review_offered(*, recording: Recording, user: AbstractBaseUser) -> bool:
    """Whether the agent's page of this call of theirs is still blind (and so offers the self-review)."""
    return bool(calls_still_blind(user=user, recording_ids=[recording.pk]))


@dataclass(frozen=True)
class SelfLine:
    """One criterion of a self-reviewed call: the agent's value beside the judge's (its quote verified: else it
    does not exist) and the supervisor's; None where a side has no value, N/A shown apart."""

    key: str
    title: str
    own: int | None
    own_not_applicable: bool
    judge: int | None
    judge_not_applicable: bool
    judge_unverified: bool
    human: int | None
    human_not_applicable: bool

    @property
    def minus_judge(self) -> int | None:
        return None if self.own is None or self.judge is None else self.own - self.judge

    @property
    def minus_human(self) -> int | None:
        return None if self.own is None or self.human is None else self.own - self.human


def self_review_lines(*, self_review: SelfReview, view: CallView) -> list[SelfLine]:
    own = {value.criterion_id: value for value in self_review.values.all()}
    lines = []
    for line in view.lines:
        mine = own.get(line.criterion.pk)
        score = line.score
        verified = bool(score is not None and score.evidence_verified)
        lines.append(
            SelfLine(
                key=line.criterion.key,
                title=line.criterion.title,
                own=mine.value if mine else None,
                own_not_applicable=bool(mine and mine.not_applicable),
                judge=score.value if verified else None,
                judge_not_applicable=verified and score.value is None,
                judge_unverified=score is not None and not verified,
                human=line.human,
                human_not_applicable=line.human_not_applicable,
            )
        )
    return lines


@dataclass(frozen=True)
class SelfAgreement:
    """How often an agent's self-review values match the human reference (the same value, or both N/A), over
    the criteria where both exist; `ci` is Wilson's 95% interval of the share (None without pairs)."""

    calls: int  # self-reviewed calls (skips not counted)
    n: int
    matches: int
    share: float | None
    ci: tuple[float, float] | None


def self_agreement(self_reviews: QuerySet[SelfReview]) -> SelfAgreement:
    reviews = list(self_reviews.filter(skipped=False).prefetch_related("values__criterion"))
    references = human_references(recording_ids=[review.recording_id for review in reviews])
    n = matches = 0
    for review in reviews:
        for value in review.values.all():
            reference = references.get((review.recording_id, value.criterion.key))
            if reference is None:
                continue
            n += 1
            matches += (reference.not_applicable and value.not_applicable) or (
                not reference.not_applicable and reference.value == value.value
            )
    if n == 0:
        return SelfAgreement(len(reviews), 0, 0, None, None)
    ci = binomtest(matches, n).proportion_ci(confidence_level=0.95, method="wilson")
    return SelfAgreement(len(reviews), n, matches, matches / n, (float(ci.low), float(ci.high)))


def own_agreement(*, user: AbstractBaseUser) -> SelfAgreement:
    """The agent's own figure: their self-reviews of their own calls."""
    return self_agreement(_own(user))


def agent_agreement(*, scope: Scope, rubric: Rubric, agent_id: str) -> SelfAgreement:
    """An agent's figure for their supervisors: the self-reviews of the agent's calls on the rubric in the
    reader's scope."""
    return self_agreement(SelfReview.objects.visible_to(scope).filter(recording__rubric=rubric, agent_id=agent_id))
