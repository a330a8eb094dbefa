"""Writing the routing guarantee: each day, per criterion of every rubric version, judge, model and prompt version,
the threshold the random audit certifies (routing.certification), stored as qa.models.CertifiedThreshold, which the
judging's routing reads."""

from __future__ import annotations

from datetime import date

from django.utils import timezone

from qa.models import CertifiedThreshold
from routing.certification import certify
from routing.selectors import Judgments, audited_pairs, judgments_to_certify
from rubrics.models import Rubric


def thresholds_certify(*, day: date | None = None, rubric_ids: list[int] | None = None) -> int:
    """Certify the day's thresholds of every judgments (or of `rubric_ids`' only) that has none for the day yet;
    return how many rows were written. Frozen per day: a day's rows, once written, are never computed again, so
    whatever routed a call that day can be read back; a second beat (or a concurrent one) writes nothing, the
    unique constraint deciding between them."""
    day = day or timezone.localdate()
    written = 0
    for judgments in judgments_to_certify(rubric_ids=rubric_ids):
        written += judgments_certify(judgments=judgments, day=day)
    return written


def judgments_certify(*, judgments: Judgments, day: date) -> int:
    done = CertifiedThreshold.objects.filter(
        rubric_id=judgments.rubric_id,
        judge_name=judgments.judge_name,
        model=judgments.model,
        prompt_version=judgments.prompt_version,
        day=day,
    )
    if done.exists():
        return 0
    rubric = Rubric.objects.get(pk=judgments.rubric_id)
    within_one = rubric.agreement_tolerance == Rubric.AgreementTolerance.WITHIN_ONE
    pairs = audited_pairs(judgments=judgments, within_one=within_one)
    rows = []
    for criterion_id in rubric.criteria.values_list("pk", flat=True):
        confidences = [confidence for confidence, _ in pairs.get(criterion_id, [])]
        agrees = [agreed for _, agreed in pairs.get(criterion_id, [])]
        result = certify(confidences, agrees, target=rubric.agreement_target, risk=rubric.agreement_risk)
        rows.append(
            CertifiedThreshold(
                rubric_id=rubric.pk,
                criterion_id=criterion_id,
                judge_name=judgments.judge_name,
                model=judgments.model,
                prompt_version=judgments.prompt_version,
                day=day,
                threshold=result.threshold,
                target=result.target,
                risk=result.risk,
                tolerance=rubric.agreement_tolerance,
                pairs=result.pairs,
                kept=result.kept,
                agreeing=result.agreeing,
                lower_bound=result.lower_bound,
                coverage=result.coverage,
                more_pairs_needed=result.more_pairs_needed,
            )
        )
    created = CertifiedThreshold.objects.bulk_create(rows, ignore_conflicts=True)
    return len(created)
