from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from access.scope import Scope
from qa.models import Judge
from experiments.selectors import DISPUTED
from reviews.filters import GROUP_LABELS
from rubrics.models import Rubric
from rubrics.selectors import rubrics_in


class ExperimentForm(forms.Form):
    BASELINES = [
        ("stored", _("Production's scores as stored (no LLM call)")),
        ("rejudge", _("Re-judged by production's judge")),
    ]

    rubric = forms.ChoiceField(label=_("Rubric"))
    # A list, not a number to type: each version says whose it is and its state (a draft is the usual candidate).
    candidate_version = forms.TypedChoiceField(label=_("Candidate version"), coerce=int)
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
        # Rubrics by name (their latest version's), never by slug.
        names: dict[str, str] = {}
        versions: dict[int, list[tuple[str, str]]] = {}
        for slug, name, version, status in rubrics_in(scope).order_by("slug", "-version").values_list(
            "slug", "name", "version", "status"
        ):
            names.setdefault(slug, name)
            versions.setdefault(version, []).append((slug, str(Rubric.Status(status).label)))
        self.fields["rubric"].choices = sorted(names.items(), key=lambda item: item[1])
        self.fields["candidate_version"].choices = [
            (version, f"v{version} · " + ", ".join(f"{names[slug]} ({state})" for slug, state in versions[version]))
            for version in sorted(versions)
        ]
        self.fields["group"].choices = [
            *((group.value, label) for group, label in GROUP_LABELS.items()),
            (DISPUTED, _("Upheld disputes")),
        ]
