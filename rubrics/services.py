from __future__ import annotations

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from rubrics.lint import RubricLintError, rubric_lint
from rubrics.models import Criterion, CriterionException, Rubric, RubricFrozenError, Section
from rubrics.rubric_file import RubricSpec, rubric_spec_of


@transaction.atomic
def rubric_publish(*, rubric: Rubric) -> Rubric:
    """Freeze a draft so scores can point at it. The previously published
    version of the same slug is archived: one published version at a time.
    Lint errors block it; warnings are the publisher's call (the admin asks)."""
    if not rubric.criteria.exists():
        raise RubricFrozenError(_("A rubric without criteria cannot be published."))
    findings = rubric_lint(rubric)
    if any(finding.is_error for finding in findings):
        raise RubricLintError(findings)
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


def rubric_new_version(*, rubric: Rubric) -> Rubric:
    """Clone a published (or archived) version into a new draft with the next number."""
    if rubric.is_draft:
        raise RubricFrozenError(_("This version is still a draft: edit it instead."))
    return rubric_import(spec=rubric_spec_of(rubric))


@transaction.atomic
def rubric_import(*, spec: RubricSpec, publish: bool = False) -> Rubric:
    """Create the next version of `spec.slug` from a parsed rubric file.

    All or nothing: a database error on any criterion leaves no trace.
    """
    if Rubric.objects.filter(slug=spec.slug, status=Rubric.Status.DRAFT).exists():
        raise RubricFrozenError(
            _("A draft of %(slug)s already exists: publish or delete it first.") % {"slug": spec.slug}
        )
    last_version = Rubric.objects.filter(slug=spec.slug).aggregate(last=Max("version"))["last"] or 0
    rubric = Rubric.objects.create(
        slug=spec.slug,
        name=spec.name,
        language=spec.language,
        version=last_version + 1,
        description=spec.description,
        review_confidence_threshold=spec.review_confidence_threshold,
        audit_rate=spec.audit_rate,
        warm_up_judgments=spec.warm_up_judgments,
        auto_fail=spec.auto_fail,
        not_applicable=spec.not_applicable,
        route_auto_fail=spec.route_auto_fail,
    )
    sections = {
        item.key: Section.objects.create(rubric=rubric, key=item.key, title=item.title, weight=item.weight, order=order)
        for order, item in enumerate(spec.sections, start=1)
    }
    for order, item in enumerate(spec.criteria, start=1):
        criterion = Criterion.objects.create(
            rubric=rubric,
            key=item.key,
            title=item.title,
            description=item.description,
            evidence_guidance=item.evidence_guidance,
            scale_min=item.scale_min,
            scale_max=item.scale_max,
            weight=item.weight,
            replaces=item.replaces,
            subject=item.subject,
            section=sections.get(item.section),
            critical=item.critical,
            fail_at=item.fail_at,
            order=order,
        )
        CriterionException.objects.bulk_create(
            CriterionException(criterion=criterion, text=exception.when, outcome=exception.outcome, order=position)
            for position, exception in enumerate(item.exceptions, start=1)
        )
    return rubric_publish(rubric=rubric) if publish else rubric
