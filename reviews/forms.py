"""The review decision form and the queue filters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from qa.models import Recording
from reviews.models import Review
from reviews.selectors import CriterionView, QueueFilters
from reviews.services import CriterionAdjustment


@dataclass(frozen=True)
class CriterionRow:
    """One criterion on the page: what the judge said and the reviewer's fields for it."""

    view: CriterionView
    value: forms.BoundField
    not_applicable: forms.BoundField | None  # only where the rubric lists a "not applicable" exception
    comment: forms.BoundField
    rejected: forms.BoundField | None  # absent in a blind audit: there is no judgment to call wrong


class ReviewForm(forms.Form):
    """A supervisor's decision, with one value/comment pair per criterion of the rubric.

    A criterion whose rubric lists a "not applicable" exception also gets a
    "does not apply" box. Outside a blind audit each value starts at the
    model's (the box ticked when the model said not applicable), and only a
    changed value or box, a comment or a "judge was wrong" tick becomes an
    adjustment. In a blind audit every value is the supervisor's own and each
    criterion needs one, or the box ticked.
    """

    decision = forms.ChoiceField(label=_("Decision"), choices=Review.Decision.choices, widget=forms.RadioSelect)
    adjusted_mean = forms.FloatField(label=_("Adjusted mean"), required=False)
    comment = forms.CharField(label=_("Overall comment"), required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, criteria: list[CriterionView], blind: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        self.blind = blind
        for view in criteria:
            criterion = view.criterion
            may_not_apply = criterion.allows_not_applicable()
            self.fields[_field(criterion.key, "value")] = forms.IntegerField(
                label=_("Value"),
                min_value=criterion.scale_min,
                max_value=criterion.scale_max,
                # With the box, "no value" can be an answer: clean() decides.
                required=blind and not may_not_apply,
                initial=None if blind or view.score is None else view.score.value,
            )
            if may_not_apply:
                self.fields[_field(criterion.key, "not_applicable")] = forms.BooleanField(
                    label=_("Does not apply"),
                    required=False,
                    initial=not blind and view.score is not None and view.score.value is None,
                )
            self.fields[_field(criterion.key, "comment")] = forms.CharField(
                label=_("Comment"), required=False, widget=forms.Textarea(attrs={"rows": 2})
            )
            if not blind:
                self.fields[_field(criterion.key, "rejected")] = forms.BooleanField(
                    label=_("The judge got this wrong"), required=False
                )

    def rows(self) -> list[CriterionRow]:
        return [
            CriterionRow(
                view=view,
                value=self[_field(view.criterion.key, "value")],
                not_applicable=self._optional(view.criterion.key, "not_applicable"),
                comment=self[_field(view.criterion.key, "comment")],
                rejected=self._optional(view.criterion.key, "rejected"),
            )
            for view in self.criteria
        ]

    def _optional(self, key: str, part: str) -> forms.BoundField | None:
        """A field only some criteria have, or only outside a blind audit."""
        name = _field(key, part)
        return self[name] if name in self.fields else None

    def clean(self) -> dict[str, Any]:
        cleaned_data = super().clean()
        if self.blind:
            for view in self.criteria:
                value = _field(view.criterion.key, "value")
                not_applicable = _field(view.criterion.key, "not_applicable")
                # Only the criteria with the box: the others' values are plainly required.
                if (
                    not_applicable in self.fields
                    and not cleaned_data.get(not_applicable)
                    and cleaned_data.get(value) is None
                    and not self.has_error(value)
                ):
                    self.add_error(value, _("Enter your value, or tick “Does not apply”."))
        return cleaned_data

    def adjustments(self) -> list[CriterionAdjustment]:
        adjustments = []
        for view in self.criteria:
            key = view.criterion.key
            value = self.cleaned_data[_field(key, "value")]
            comment = self.cleaned_data[_field(key, "comment")]
            rejected = self.cleaned_data.get(_field(key, "rejected"), False)
            ticked = self.cleaned_data.get(_field(key, "not_applicable"), False)
            model_value = view.score.value if view.score is not None else None
            # An untouched value means "the model's value stands", stored as None.
            adjusted = value if self.blind or value != model_value else None
            # So does a box left ticked over the model's own "not applicable";
            # ticked next to a new value, it goes on for the service to refuse.
            not_applicable = ticked and (adjusted is not None or not self.fields[_field(key, "not_applicable")].initial)
            if adjusted is not None or not_applicable or comment.strip() or rejected:
                adjustments.append(
                    CriterionAdjustment(
                        key, adjusted_value=adjusted, not_applicable=not_applicable, comment=comment, rejected=rejected
                    )
                )
        return adjustments

    def add_service_errors(self, errors: dict[str, Any], adjustments: list[CriterionAdjustment]) -> None:
        """Show review_create's InvalidInputError at the fields it names; the rest above the form."""
        for name, message in errors.items():
            if name == "criteria":
                for index, criterion_message in message.items():
                    key = adjustments[int(index)].criterion_key
                    self.add_error(_field(key, "value"), criterion_message)
            elif name in self.fields:
                self.add_error(name, message)
            else:
                self.add_error(None, message)


# The days a date filter accepts: anything outside is a typo, and the day after the last one must
# still be a date (`?date_to=9999-12-31` overflowed into a server error).
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(2999, 12, 31)


def clean_date_range(form: forms.Form, data: dict[str, Any]) -> None:
    """The one rule for every date filter (the queue, the reports' pages and API): each day in
    range, and the start not after the end; a bad one becomes an error on its field."""
    for name in ("date_from", "date_to"):
        day = data.get(name)
        if day and not FIRST_DAY <= day <= LAST_DAY:
            form.add_error(
                name,
                _("Choose a day between %(first)s and %(last)s.")
                % {"first": FIRST_DAY.isoformat(), "last": LAST_DAY.isoformat()},
            )
    date_from, date_to = data.get("date_from"), data.get("date_to")
    if date_from and date_to and date_from > date_to:
        form.add_error("date_to", _("The end date is before the start date."))


class QueueFilterForm(forms.Form):
    rubric = forms.ChoiceField(label=_("Rubric"), required=False)
    team = forms.ChoiceField(label=_("Team"), required=False)
    agent = forms.CharField(label=_("Agent"), required=False, max_length=200)
    reason = forms.ChoiceField(
        label=_("Reason"), required=False, choices=[("", _("Any reason")), *Recording.ReviewReason.choices]
    )
    date_from = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, rubrics: list[tuple[str, str]], teams: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["rubric"].choices = [("", _("Any rubric")), *rubrics]
        self.fields["team"].choices = [("", _("Any team")), *((team, team) for team in teams)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        clean_date_range(self, data)
        return data

    def filters(self) -> QueueFilters:
        """The valid filters; a bad one (an unparsable date, a day out of range, an end before the
        start) is dropped, and shown as an error."""
        self.is_valid()
        return QueueFilters(**{name: value for name, value in self.cleaned_data.items() if value})


def _field(key: str, part: str) -> str:
    return f"criterion-{key}-{part}"
