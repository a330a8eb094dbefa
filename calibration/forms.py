"""Forms of the calibration pages: creating a session, scoring a call, recording an agreed value."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from access.scope import Scope
from calibration.selectors import CallSelection
from calibration.services import PARTICIPANT_CAPABILITY, CalibrationAnswer
from reviews.forms import NOT_APPLICABLE
from reviews.selectors import rubric_choices
from rubrics.models import Criterion
from rubrics.selectors import rubric_latest_published


def supervisors(scope: Scope) -> QuerySet:
    """Active users who may review, so may take part in a calibration: members of the workspaces of
    `scope` (another workspace's people are not even named)."""
    app_label, codename = PARTICIPANT_CAPABILITY.split(".")
    permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename)
    members = Q() if scope.everything else Q(memberships__workspace__in=sorted(scope.workspace_ids))
    return (
        get_user_model()
        .objects.filter(Q(groups__permissions__in=permission) | Q(user_permissions__in=permission), members, is_active=True)
        .distinct()
        .order_by("username")
    )


class SessionCreateForm(forms.Form):
    CHOOSE = [
        ("sample", _("A random sample of the calls matching the filters")),
        ("filter", _("Every call matching the filters")),
        ("ids", _("These recording ids")),
    ]

    name = forms.CharField(label=_("Name"), max_length=200)
    rubric = forms.ChoiceField(label=_("Rubric"), help_text=_("Its published version."))
    participants = forms.ModelMultipleChoiceField(
        label=_("Participants"), queryset=get_user_model().objects.none(), widget=forms.CheckboxSelectMultiple
    )
    due_date = forms.DateField(label=_("Due date"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    choose = forms.ChoiceField(label=_("Calls"), choices=CHOOSE, initial="sample", widget=forms.RadioSelect)
    sample = forms.IntegerField(label=_("Sample size"), min_value=1, initial=10, required=False)
    seed = forms.IntegerField(
        label=_("Seed"), initial=0, required=False, help_text=_("The same seed draws the same calls.")
    )
    recording_ids = forms.CharField(
        label=_("Recording ids"), required=False, help_text=_("Separated by spaces or commas.")
    )
    team = forms.CharField(label=_("Team"), required=False, max_length=100)
    agent = forms.CharField(label=_("Agent id"), required=False, max_length=100)
    date_from = forms.DateField(label=_("Calls from"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("Calls to"), required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, scope: Scope, **kwargs: Any) -> None:
        """`scope`: the workspaces where the lead runs calibrations (Scope.where)."""
        super().__init__(*args, **kwargs)
        self.scope = scope
        self.fields["rubric"].choices = rubric_choices(scope=scope)
        self.fields["participants"].queryset = supervisors(scope)

    def clean_recording_ids(self) -> tuple[int, ...]:
        text = self.cleaned_data["recording_ids"].strip()
        if text and not re.fullmatch(r"[\d\s,]+", text):
            raise forms.ValidationError(_("Give recording ids as numbers, separated by spaces or commas."))
        return tuple(int(part) for part in re.split(r"[\s,]+", text) if part)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("rubric"):
            data["rubric_version"] = rubric_latest_published(slug=data["rubric"], scope=self.scope)
            if data["rubric_version"] is None:
                self.add_error("rubric", _("This rubric has no published version."))
        choose = data.get("choose")
        if choose == "ids" and not data.get("recording_ids") and not self.has_error("recording_ids"):
            self.add_error("recording_ids", _("Give the recording ids."))
        if choose == "sample" and data.get("sample") is None and not self.has_error("sample"):
            self.add_error("sample", _("Give the sample size."))
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.add_error("date_to", _("The end date is before the start date."))
        return data

    def selection(self) -> CallSelection:
        data = self.cleaned_data
        filters = {key: data[key] for key in ("team", "agent", "date_from", "date_to")}
        if data["choose"] == "ids":
            return CallSelection(recording_ids=data["recording_ids"], **filters)
        if data["choose"] == "sample":
            return CallSelection(sample=data["sample"], seed=data["seed"] or 0, **filters)
        return CallSelection(**filters)


@dataclass(frozen=True)
class ScoringRow:
    """One criterion as the scoring component (templates/review/_criterion.html) shows it."""

    number: int
    criterion: Criterion
    value: forms.BoundField


class ScoringForm(forms.Form):
    """A participant's value per criterion (or N/A where the rubric allows it) and a comment: the review
    page's value buttons (one per point of the scale, N/A last), so its keys work here too."""

    comment = forms.CharField(label=_("Comment"), required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args: Any, criteria: list[Criterion], own: dict, own_comment: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        self.fields["comment"].initial = own_comment
        for criterion in criteria:
            given = own.get(criterion.key)
            scale = [(str(value), str(value)) for value in range(criterion.scale_min, criterion.scale_max + 1)]
            if criterion.allows_not_applicable():
                scale.append((NOT_APPLICABLE, _("N/A")))
            initial = None
            if given is not None:
                initial = NOT_APPLICABLE if given.not_applicable else str(given.value)
            self.fields[f"{criterion.key}-value"] = forms.ChoiceField(
                label=criterion.title,
                choices=scale,
                widget=forms.RadioSelect,
                required=True,
                initial=initial,
                error_messages={
                    "required": _("Choose your value, or N/A.") if criterion.allows_not_applicable() else _("Choose your value."),
                },
            )

    def rows(self) -> list[ScoringRow]:
        return [
            ScoringRow(number, criterion, self[f"{criterion.key}-value"])
            for number, criterion in enumerate(self.criteria, start=1)
        ]

    def answers(self) -> list[CalibrationAnswer]:
        answers = []
        for criterion in self.criteria:
            choice = self.cleaned_data[f"{criterion.key}-value"]
            ticked = choice == NOT_APPLICABLE
            answers.append(CalibrationAnswer(criterion.key, None if ticked else int(choice), ticked))
        return answers
