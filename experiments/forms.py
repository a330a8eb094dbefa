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
        self.versions: dict[str, list[tuple[int, str]]] = {}  # per rubric slug, its versions and their states
        for slug, name, version, status in rubrics_in(scope).order_by("slug", "-version").values_list(
            "slug", "name", "version", "status"
        ):
            names.setdefault(slug, name)
            self.versions.setdefault(slug, []).append((version, str(Rubric.Status(status).label)))
        self.fields["rubric"].choices = sorted(names.items(), key=lambda item: item[1])
        # One group per rubric, named as the rubric list names it: a version is a version of one rubric
        # (issue 41: "v1 · Customer care (Published), Atención (Published)" offered every rubric's v1 at once).
        # static/experiments.js offers the chosen rubric's group only; `clean` refuses a version it lacks.
        self.fields["candidate_version"].choices = [
            (names[slug], [(version, f"v{version} ({state})") for version, state in reversed(self.versions[slug])])
            for slug, _name in self.fields["rubric"].choices
        ]
        self.fields["candidate_version"].widget.attrs["data-follows"] = "id_rubric"
        self.fields["group"].choices = [
            *((group.value, label) for group, label in GROUP_LABELS.items()),
            (DISPUTED, _("Upheld disputes")),
        ]

    def clean(self) -> dict:
        data = super().clean()
        slug, version = data.get("rubric"), data.get("candidate_version")
        if slug and version is not None and version not in {number for number, _state in self.versions.get(slug, [])}:
            self.add_error("candidate_version", _("This rubric has no version %(version)s.") % {"version": version})
        return data
