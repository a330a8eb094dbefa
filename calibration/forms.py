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
from django.utils.translation import ngettext

from access.scope import Scope
from calibration.selectors import CallSelection, calibration_calls_named, calibration_pool
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
        label=_("Recording ids"),
        required=False,
        help_text=_("The calls' own ids (or the numbers in their addresses), separated by spaces or commas."),
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
        # How many calls each rubric's published version can draw from, before the lead asks for more.
        eligible = []
        for slug, _label in self.fields["rubric"].choices:
            if slug and (version := rubric_latest_published(slug=slug, scope=scope)) is not None:
                count = calibration_pool(version).count()
                eligible.append(
                    ngettext(
                        "%(count)s judged call can be drawn from %(rubric)s v%(version)s",
                        "%(count)s judged calls can be drawn from %(rubric)s v%(version)s",
                        count,
                    )
                    % {"count": count, "rubric": version.name, "version": version.version}
                )
        if eligible:
            self.fields["sample"].help_text = " · ".join(eligible) + "."

    def clean_recording_ids(self) -> list[str]:
        """The names as typed; read only when the calls are chosen by id (leftover text after switching to a
        sample is no error)."""
        return [part for part in re.split(r"[\s,]+", self.cleaned_data["recording_ids"].strip()) if part]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("rubric"):
            data["rubric_version"] = rubric_latest_published(slug=data["rubric"], scope=self.scope)
            if data["rubric_version"] is None:
                self.add_error("rubric", _("This rubric has no published version."))
        choose = data.get("choose")
        names = data.get("recording_ids") or []
        data["recording_ids"] = ()
        if choose == "ids" and not names:
            self.add_error("recording_ids", _("Give the recording ids."))
        elif choose == "ids" and data.get("rubric_version") is not None:
            data["recording_ids"], unknown = calibration_calls_named(data["rubric_version"], names)
            if unknown:
                self.add_error(
                    "recording_ids",
                    _("No judged call of %(rubric)s v%(version)s has the id: %(ids)s.")
                    % {"rubric": data["rubric_version"].name, "version": data["rubric_version"].version, "ids": ", ".join(unknown)},
                )
        if choose == "sample" and data.get("sample") is None and not self.has_error("sample"):
            self.add_error("sample", _("Give the sample size."))
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.add_error("date_to", _("The end date is before the start date."))
        return data

    def calls_field(self) -> str | None:
        """The field a refusal of the chosen calls belongs beside: the ids, the sample size, or (every call
        matching) the form's top."""
        return {"ids": "recording_ids", "sample": "sample"}.get(self.cleaned_data.get("choose", ""))

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
