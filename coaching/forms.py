"""The coach's form to open a session, and the comment form both sides use."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from coaching.models import MAX_CRITERIA
from rubrics.models import Rubric

DEFAULT_FOLLOW_UP_DAYS = 28


class SessionForm(forms.Form):
    criteria = forms.MultipleChoiceField(
        label=_("Criteria (one to three)"), widget=forms.CheckboxSelectMultiple, required=True
    )
    goal = forms.CharField(
        label=_("Agreed goal"), max_length=500, help_text=_("What the agent will do, e.g. “states the debt amount in the first two minutes”.")
    )
    note = forms.CharField(label=_("Note"), required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))
    follow_up_on = forms.DateField(label=_("Follow-up date"), widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    calls = forms.TypedMultipleChoiceField(
        label=_("Calls that show it"), coerce=int, required=False, widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: the agent's worst verified values on each criterion are proposed."),
    )  # fmt: skip

    def __init__(self, *args, rubric: Rubric, call_choices: list[tuple[int, str]], **kwargs) -> None:
        kwargs.setdefault("initial", {}).setdefault(
            "follow_up_on", timezone.localdate() + timedelta(days=DEFAULT_FOLLOW_UP_DAYS)
        )
        super().__init__(*args, **kwargs)
        self.fields["criteria"].choices = [(c.key, c.title) for c in rubric.criteria.all()]
        self.fields["calls"].choices = call_choices

    def clean_criteria(self) -> list[str]:
        keys = self.cleaned_data["criteria"]
        if len(keys) > MAX_CRITERIA:
            raise forms.ValidationError(_("Coach one to three criteria at a time."))
        return keys

    def add_service_errors(self, errors: dict) -> None:
        for field, message in errors.items():
            self.add_error(field if field in self.fields else None, str(message))


class CommentForm(forms.Form):
    body = forms.CharField(label=_("Comment"), max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))
