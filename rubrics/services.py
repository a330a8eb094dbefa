from __future__ import annotations

from dataclasses import replace

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from access.models import Workspace, default_workspace_id
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
def rubric_import(
    *, spec: RubricSpec, publish: bool = False, workspace: Workspace | None = None, slug: str | None = None
) -> Rubric:
    """Create the next version of `spec.slug` (or of `slug`, in place of the file's: one shared file
    starts the rubrics of several workspaces) from a parsed rubric file, in the workspace its family
    lives in (a new family: `workspace`, by default the default workspace). A slug another workspace
    holds is refused: a slug names one family everywhere.

    All or nothing: a database error on any criterion leaves no trace.
    """
    if slug is not None:
        if not slug or slug != slugify(slug):
            raise ValidationError(
                {"slug": _("“%(slug)s” is not a slug: use lowercase letters, digits and hyphens.") % {"slug": slug}}
            )
        spec = replace(spec, slug=slug)
    family = Rubric.objects.filter(slug=spec.slug).values_list("workspace_id", flat=True).first()
    if workspace is not None and family is not None and family != workspace.pk:
        raise ValidationError(
            {"slug": _("The rubric %(slug)s belongs to another workspace.") % {"slug": spec.slug}}
        )
    workspace_id = family or (workspace.pk if workspace is not None else default_workspace_id())
    if Rubric.objects.filter(slug=spec.slug, status=Rubric.Status.DRAFT).exists():
        raise RubricFrozenError(
            _("A draft of %(slug)s already exists: publish or delete it first.") % {"slug": spec.slug}
        )
    last_version = Rubric.objects.filter(slug=spec.slug).aggregate(last=Max("version"))["last"] or 0
    rubric = Rubric.objects.create(
        workspace_id=workspace_id,
        slug=spec.slug,
        name=spec.name,
        language=spec.language,
        version=last_version + 1,
        description=spec.description,
        review_confidence_threshold=spec.review_confidence_threshold,
        audit_rate=spec.audit_rate,
        warm_up_judgments=spec.warm_up_judgments,
        agreement_target=spec.agreement_target,
        agreement_risk=spec.agreement_risk,
        agreement_tolerance=spec.agreement_tolerance,
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

