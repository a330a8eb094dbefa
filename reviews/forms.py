"""The review decision form and the queue filters."""

from __future__ import annotations

from dataclasses import dataclass
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
    comment: forms.BoundField
    rejected: forms.BoundField | None  # absent in a blind audit: there is no judgment to call wrong


class ReviewForm(forms.Form):
    """A supervisor's decision, with one value/comment pair per criterion of the rubric.

    Outside a blind audit each value starts at the model's, and only a changed
    value, a comment or a "judge was wrong" tick becomes an adjustment. In a
    blind audit every value is the supervisor's own and all are required.
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
            self.fields[_field(criterion.key, "value")] = forms.IntegerField(
                label=_("Value"),
                min_value=criterion.scale_min,
                max_value=criterion.scale_max,
                required=blind,
                initial=None if blind or view.score is None else view.score.value,
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
                comment=self[_field(view.criterion.key, "comment")],
                rejected=None if self.blind else self[_field(view.criterion.key, "rejected")],
            )
            for view in self.criteria
        ]

    def adjustments(self) -> list[CriterionAdjustment]:
        adjustments = []
        for view in self.criteria:
            key = view.criterion.key
            value = self.cleaned_data[_field(key, "value")]
            comment = self.cleaned_data[_field(key, "comment")]
            rejected = self.cleaned_data.get(_field(key, "rejected"), False)
            model_value = view.score.value if view.score is not None else None
            # An untouched value means "the model's value stands", stored as None.
            adjusted = value if self.blind or value != model_value else None
            if adjusted is not None or comment.strip() or rejected:
                adjustments.append(CriterionAdjustment(key, adjusted_value=adjusted, comment=comment, rejected=rejected))
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

    def filters(self) -> QueueFilters:
        """The valid filters; a bad one (an unparsable date) is dropped, and shown as an error."""
        self.is_valid()
        return QueueFilters(**{name: value for name, value in self.cleaned_data.items() if value})


def _field(key: str, part: str) -> str:
    return f"criterion-{key}-{part}"
