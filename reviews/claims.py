"""Review claims: who is working on which recording, so two supervisors don't review one call at once.

A claim is one row per recording (ReviewClaim is a OneToOne on it). It is
never cleaned up on expiry: an expired row simply stops counting, and the
next supervisor takes it over.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from qa.models import Recording
from reviews.models import ReviewClaim


@transaction.atomic
def claim_take(*, recording: Recording, user: AbstractBaseUser) -> ReviewClaim | None:
    """Claim the recording for `user` (or extend their claim); None if someone else holds it.

    Race-free without locks: the UPDATE only matches a row that is ours or
    expired, and PostgreSQL re-checks that condition after waiting on a
    concurrent writer; when no row matches, the INSERT either creates the
    claim or hits the one-claim-per-recording constraint, which means another
    supervisor got there first.
    """
    now = timezone.now()
    expires_at = now + timedelta(minutes=settings.QA_REVIEW_CLAIM_MINUTES)
    taken = (
        ReviewClaim.objects.filter(recording=recording)
        .filter(Q(user=user) | Q(expires_at__lte=now))
        .update(user=user, expires_at=expires_at)
    )
    if taken:
        return ReviewClaim.objects.get(recording=recording)
    try:
        with transaction.atomic():  # a savepoint, so losing the race leaves the transaction usable
            return ReviewClaim.objects.create(recording=recording, user=user, expires_at=expires_at)
    except IntegrityError:
        return None


def claim_release(*, recording: Recording, user: AbstractBaseUser) -> bool:
    """Give up `user`'s claim on the recording; another supervisor's claim is left alone."""
    deleted, _ = ReviewClaim.objects.filter(recording=recording, user=user).delete()
    return bool(deleted)


def claim_is_active(claim: ReviewClaim | None) -> bool:
    return claim is not None and claim.expires_at > timezone.now()


def claim_holder(*, recording: Recording) -> ReviewClaim | None:
    """The active claim on the recording, with its user, if anyone holds one."""
    return ReviewClaim.objects.select_related("user").filter(recording=recording, expires_at__gt=timezone.now()).first()
