"""The calls list's filters, the assignment form and the throughput page's period."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from qa.models import Recording
from calls.selectors import (
    ASSIGNED_ANY,
    ASSIGNED_ME,
    ASSIGNED_NONE,
    CALL_STATUSES,
    NOT_APPLICABLE,
    CallFilters,
)
from reviews.forms import clean_date_range

MAX_SAMPLE = 500  # the most calls one random sample assigns
THROUGHPUT_DAYS = 30  # the throughput page's default period, ending today


class CallFilterForm(forms.Form):
    q = forms.CharField(
        label=_("Words said"),
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": _('e.g. refund, "duplicate charge"')}),
    )
    rubric = forms.ChoiceField(label=_("Rubric"), required=False)
    # A text, not a list of the teams: listing the distinct teams of 100,000 calls costs more than a search.
    team = forms.CharField(label=_("Team"), required=False, max_length=100)
    agent = forms.CharField(label=_("Agent id"), required=False, max_length=100)
    date_from = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    status = forms.ChoiceField(label=_("Status"), required=False)
    reason = forms.ChoiceField(
        label=_("Reason"), required=False, choices=[("", _("Any reason")), *Recording.ReviewReason.choices]
    )
    assigned = forms.ChoiceField(
        label=_("Assigned"),
        required=False,
        choices=[
            ("", _("Assigned or not")),
            (ASSIGNED_ME, _("Assigned to me")),
            (ASSIGNED_ANY, _("Assigned to anyone")),
            (ASSIGNED_NONE, _("Not assigned")),
        ],
    )
    criterion = forms.ChoiceField(label=_("Criterion"), required=False)
    value = forms.CharField(
        label=_("Judge's value"),
        required=False,
        max_length=3,
        help_text=_("A number, or na for “does not apply”; only where the judge's quote verified."),
    )

    quality_max = forms.FloatField(
        label=_("Quality score at most"), required=False, min_value=0, max_value=100,
        widget=forms.NumberInput(attrs={"step": "any"}),
    )  # fmt: skip

    def __init__(
        self,
        *args: Any,
        rubrics: list[tuple[str, str]],
        criteria: list[tuple[str, str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["rubric"].choices = [("", _("Any rubric")), *rubrics]
        self.fields["criterion"].choices = [("", _("Any criterion")), *criteria]
        self.fields["status"].choices = [
            ("", _("Any status")),
            *((status.value, status.label) for status in CALL_STATUSES),
        ]

    def clean_value(self) -> str:
        value = self.cleaned_data["value"].strip().lower()
        if value and value != NOT_APPLICABLE and not value.lstrip("-").isdigit():
            raise forms.ValidationError(_("Give a number, or na."))
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        clean_date_range(self, data)
        if data.get("value") and not data.get("criterion"):
            self.add_error("criterion", _("Choose the criterion whose value you filter by."))
        if data.get("criterion") and not data.get("value") and "value" not in self.errors:
            self.add_error("value", _("Give the value to filter the criterion by."))
        return data

    def query(self) -> str:
        """The search as a query string of this form's fields that are given (no page): what a saved
        search keeps, so it opens the same filters and words."""
        return urlencode([(name, value) for name in self.fields for value in self.data.getlist(name) if value.strip()])

    def filters(self) -> CallFilters:
        """The filters of a valid form (call `is_valid` first)."""
        data = {name: value for name, value in self.cleaned_data.items() if value not in (None, "")}
        return CallFilters(words=data.pop("q", ""), **data)


class AssignForm(forms.Form):
    """Who gets the calls, and which: the ticked ones (`call`), or a random sample of the search."""

    SELECTED, SAMPLE = "selected", "sample"

    assignee = forms.ChoiceField(label=_("Assign to"))
    pick = forms.ChoiceField(
        label=_("Which calls"),
        choices=[(SELECTED, _("The calls ticked")), (SAMPLE, _("A random sample of these results"))],
        initial=SELECTED,
        widget=forms.RadioSelect,
    )
    call = forms.TypedMultipleChoiceField(required=False, coerce=int)
    size = forms.IntegerField(label=_("Sample size"), required=False, min_value=1, max_value=MAX_SAMPLE, initial=10)
    seed = forms.IntegerField(
        label=_("Seed"), required=False, min_value=0, max_value=2**31 - 1,
        help_text=_("The same seed and search draw the same calls."),
    )  # fmt: skip

    def __init__(self, *args: Any, assignees: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].choices = [("", _("Choose a supervisor")), *assignees]
        self.fields["call"].choices = [(value, value) for value in self.data.getlist("call") if str(value).isdigit()] if self.is_bound else []

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("pick") == self.SELECTED and not data.get("call"):
            self.add_error("call", _("Tick the calls to assign, or choose a random sample."))
        if data.get("pick") == self.SAMPLE:
            for name in ("size", "seed"):
                if data.get(name) is None and name not in self.errors:
                    self.add_error(name, _("Required for a random sample."))
        return data


class QueueBulkForm(forms.Form):
    """What to do with the calls ticked in the review queue: assign them to a supervisor, or send them to a
    new calibration session (its form opens with them chosen)."""

    ASSIGN, CALIBRATE = "assign", "calibrate"

    action = forms.ChoiceField(choices=[(ASSIGN, _("Assign")), (CALIBRATE, _("Send to calibration"))])
    call = forms.TypedMultipleChoiceField(required=False, coerce=int)
    assignee = forms.ChoiceField(label=_("Assign to"), required=False)

    def __init__(self, *args: Any, assignees: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].choices = [("", _("Choose a supervisor")), *assignees]
        self.fields["call"].choices = [(value, value) for value in self.data.getlist("call") if str(value).isdigit()] if self.is_bound else []

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("call") and "call" not in self.errors:
            self.add_error("call", _("Tick the calls first."))
        if data.get("action") == self.ASSIGN and not data.get("assignee") and "assignee" not in self.errors:
            self.add_error("assignee", _("Choose the supervisor to assign the calls to."))
        return data


class SavedSearchForm(forms.Form):
    name = forms.CharField(label=_("Save this search as"), max_length=100)


class PeriodForm(forms.Form):
    date_from = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        clean_date_range(self, data)
        today = timezone.localdate()
        data["date_to"] = data.get("date_to") or today
        data["date_from"] = data.get("date_from") or data["date_to"] - timedelta(days=THROUGHPUT_DAYS - 1)
        return data
