from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from rubrics.models import CriterionException, Rubric, RubricFrozenError


@transaction.atomic
def rubric_publish(*, rubric: Rubric) -> Rubric:
    """Freeze a draft so scores can point at it. The previously published
    version of the same slug is archived: one published version at a time."""
    if not rubric.criteria.exists():
        raise RubricFrozenError(_("A rubric without criteria cannot be published."))
    now = timezone.now()
    # The conditional update claims the transition: publishing twice, or a
    # version someone else published meanwhile, changes nothing.
    if not Rubric.objects.filter(pk=rubric.pk, status=Rubric.Status.DRAFT).update(
        status=Rubric.Status.PUBLISHED, published_at=now
    ):
        raise RubricFrozenError(_("Only a draft can be published."))
    Rubric.objects.filter(slug=rubric.slug, status=Rubric.Status.PUBLISHED).exclude(pk=rubric.pk).update(
        status=Rubric.Status.ARCHIVED
    )
    rubric.refresh_from_db()
    return rubric


@transaction.atomic
def rubric_new_version(*, rubric: Rubric) -> Rubric:
    """Clone a published (or archived) version into a new draft with the next number."""
    if rubric.is_draft:
        raise RubricFrozenError(_("This version is still a draft: edit it instead."))
    if Rubric.objects.filter(slug=rubric.slug, status=Rubric.Status.DRAFT).exists():
        raise RubricFrozenError(_("A draft of %(slug)s already exists.") % {"slug": rubric.slug})
    last_version = Rubric.objects.filter(slug=rubric.slug).order_by("-version").values_list("version", flat=True)[0]
    draft = Rubric.objects.create(
        name=rubric.name,
        slug=rubric.slug,
        language=rubric.language,
        version=last_version + 1,
        description=rubric.description,
        review_confidence_threshold=rubric.review_confidence_threshold,
        audit_rate=rubric.audit_rate,
    )
    for criterion in rubric.criteria.prefetch_related("exceptions"):
        exceptions = list(criterion.exceptions.all())
        criterion.pk = None
        criterion.rubric = draft
        criterion.save()
        for exception in exceptions:
            CriterionException.objects.create(
                criterion=criterion, text=exception.text, outcome=exception.outcome, order=exception.order
            )
    return draft
