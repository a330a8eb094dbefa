from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from access.scope import Scope
from qa.models import Judge
from reviews.reports.forms import GROUP_LABELS
from rubrics.selectors import rubrics_in


class ExperimentForm(forms.Form):
    BASELINES = [
        ("stored", _("Production's scores as stored (no LLM call)")),
        ("rejudge", _("Re-judged by production's judge")),
    ]

    rubric = forms.ChoiceField(label=_("Rubric"))
    candidate_version = forms.IntegerField(label=_("Candidate version"), min_value=1)
    judge = forms.ModelChoiceField(
        label=_("Candidate judge"), queryset=Judge.objects.all(), required=False, empty_label=_("Production's judge")
    )
    samples = forms.IntegerField(label=_("Samples"), min_value=1, max_value=Judge.MAX_SAMPLES, required=False)
    baseline = forms.ChoiceField(label=_("Baseline"), choices=BASELINES, initial="stored")
    group = forms.ChoiceField(label=_("Group"))
    since = forms.DateField(label=_("Since"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label=_("Until"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    limit = forms.IntegerField(label=_("Limit"), min_value=1, required=False)
    seed = forms.IntegerField(label=_("Seed"), initial=0)

    def __init__(self, *args, scope: Scope, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        slugs = sorted(set(rubrics_in(scope).values_list("slug", flat=True)))
        self.fields["rubric"].choices = [(slug, slug) for slug in slugs]
        self.fields["group"].choices = [(group.value, label) for group, label in GROUP_LABELS.items()]
