"""The review decision form and the queue filters."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.utils.translation import gettext_lazy as _

from qa.models import Recording
from reviews.models import Review
from reviews.selectors import QUALITY_SORT, CriterionView, QueueFilters
from reviews.services import CriterionAdjustment
from rubrics.quality import NOT_APPLICABLE as QUALITY_NOT_APPLICABLE


NOT_APPLICABLE = "na"  # the value button meaning "does not apply" (static/review/quality.js reads it too)


@dataclass(frozen=True)
class CriterionRow:
    """One criterion on the page: what the judge said and the reviewer's fields for it."""

    number: int  # its place in the rubric, shown on the criterion and on its highlights
    view: CriterionView
    value: forms.BoundField
    comment: forms.BoundField
    rejected: forms.BoundField | None  # absent in a blind audit: there is no judgment to call wrong

    @property
    def model_choice(self) -> str:
        """The model's answer as a value button's value, so the page can tell a change from it; none where
        its quote did not verify: that value does not exist, so no value differs from it or needs a comment."""
        score = self.view.score
        if score is None or not score.value_exists:
            return ""
        return NOT_APPLICABLE if score.value is None else str(score.value)


@dataclass(frozen=True)
class ErrorLink:
    """One line of the error summary beside the decision bar: where the problem is and what it is."""

    field_id: str
    label: str
    message: str


class ReviewForm(forms.Form):
    """A supervisor's decision, with one value/comment pair per criterion of the rubric.

    Each value is a row of buttons, one per point of the criterion's scale,
    plus "N/A" where the rubric lists a "not applicable" exception. Outside a
    blind audit the values start at the latest review of this judgment, else
    at the model's; only a value that differs from the model's, a comment or
    a "judge was wrong" tick becomes an adjustment. In a blind audit every
    value is the supervisor's own and each criterion needs one.
    The decision comes from the button that submits the form.
    """

    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=Review.Decision.choices,
        error_messages={"required": _("Choose approve, reject or needs another review.")},
    )
    reject_reason = forms.ChoiceField(
        label=_("What was wrong overall"),
        required=False,
        choices=[("", _("(optional)")), *Review.RejectReason.choices],
    )
    adjusted_mean = forms.FloatField(label=_("Adjusted mean"), required=False)
    comment = forms.CharField(label=_("Overall comment"), required=False, widget=forms.Textarea(attrs={"rows": 1}))
    then = forms.ChoiceField(
        label=_("After submitting"),
        choices=[("next", _("open the next call")), ("queue", _("go back to the queue"))],
        initial="next",
        required=False,
    )

    def __init__(self, *args: Any, criteria: list[CriterionView], blind: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        self.blind = blind
        for view in criteria:
            criterion = view.criterion
            scale = [(str(value), str(value)) for value in range(criterion.scale_min, criterion.scale_max + 1)]
            if criterion.allows_not_applicable():
                scale.append((NOT_APPLICABLE, _("N/A")))
            self.fields[_field(criterion.key, "value")] = forms.ChoiceField(
                label=criterion.title,
                choices=scale,
                widget=forms.RadioSelect,
                required=blind,
                initial=None if blind else _starting_choice(view),
                # The judge's value exists only where its quote verified: elsewhere nothing is
                # preselected, as in a blind audit, and an approve needs the supervisor's own value.
                error_messages={"required": _("Choose your value.")},
            )
            self.fields[_field(criterion.key, "comment")] = forms.CharField(
                label=_("Comment"),
                required=False,
                widget=forms.Textarea(attrs={"rows": 2}),
                initial=view.latest.comment if view.latest else "",
            )
            if not blind:
                self.fields[_field(criterion.key, "rejected")] = forms.BooleanField(
                    label=_("The judge got this wrong"),
                    required=False,
                    initial=bool(view.latest and view.latest.rejected),
                )

    def rows(self) -> list[CriterionRow]:
        return [
            CriterionRow(
                number=number,
                view=view,
                value=self[_field(view.criterion.key, "value")],
                comment=self[_field(view.criterion.key, "comment")],
                rejected=self[_field(view.criterion.key, "rejected")] if not self.blind else None,
            )
            for number, view in enumerate(self.criteria, start=1)
        ]

    def chosen_values(self) -> dict[str, int | object]:
        """The value chosen per criterion key, as the quality score reads them (rubrics.quality): a number,
        or N/A; none chosen yet, absent. What the page's live score starts from (static/review/quality.js)."""
        values: dict[str, int | object] = {}
        for view in self.criteria:
            choice = self[_field(view.criterion.key, "value")].value()
            if choice == NOT_APPLICABLE:
                values[view.criterion.key] = QUALITY_NOT_APPLICABLE
            elif choice not in (None, "") and str(choice).lstrip("-").isdigit():
                values[view.criterion.key] = int(choice)
        return values

    def adjustments(self) -> list[CriterionAdjustment]:
        adjustments = []
        for view in self.criteria:
            key = view.criterion.key
            choice = self.cleaned_data[_field(key, "value")]
            comment = self.cleaned_data[_field(key, "comment")]
            rejected = self.cleaned_data.get(_field(key, "rejected"), False)
            model_value = view.score.value if view.score is not None else None
            # Where the judge's value does not exist, whatever the supervisor chooses is their own.
            own = self.blind or (view.score is not None and not view.score.value_exists)
            ticked = choice == NOT_APPLICABLE
            value = int(choice) if choice and not ticked else None
            # The model's own answer chosen again means "the model's value stands", stored as nothing.
            adjusted = value if own or value != model_value else None
            not_applicable = ticked and (own or model_value is not None)
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
            elif name == "unverified":  # per criterion key: an approve that gives no value where none exists
                for key, criterion_message in message.items():
                    self.add_error(_field(key, "value"), criterion_message)
            elif name in self.fields:
                self.add_error(name, message)
            else:
                self.add_error(None, message)

    def error_summary(self) -> list[ErrorLink]:
        """Every error, each linking to its field and naming it as the page does (a criterion by its title)."""
        criteria = {
            _field(view.criterion.key, part): (f"criterion-{view.criterion.key}", view.criterion.title)
            for view in self.criteria
            for part in ("value", "comment")
        }
        links = [ErrorLink("review-form", str(_("Review")), str(message)) for message in self.non_field_errors()]
        for name, messages in self.errors.items():
            if name == NON_FIELD_ERRORS:
                continue
            anchor, label = criteria.get(name) or (self[name].auto_id, str(self.fields[name].label))
            links += [ErrorLink(anchor, label, str(message)) for message in messages]
        return links


def _starting_choice(view: CriterionView) -> str | None:
    """The latest review of this judgment where there is one (a new review starts from it), else the model's."""
    latest, score = view.latest, view.score
    if latest is not None and latest.not_applicable:
        return NOT_APPLICABLE
    if latest is not None and latest.adjusted_value is not None:
        return str(latest.adjusted_value)
    if score is None or not score.value_exists:  # an unverified value is not offered as a starting point
        return None
    return NOT_APPLICABLE if score.value is None else str(score.value)


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
    agent = forms.CharField(label=_("Agent id"), required=False, max_length=100)
    reason = forms.ChoiceField(
        label=_("Reason"), required=False, choices=[("", _("Any reason")), *Recording.ReviewReason.choices]
    )
    date_from = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    sort = forms.ChoiceField(
        label=_("Order"),
        required=False,
        choices=[("", _("Lowest confidence first")), (QUALITY_SORT, _("Lowest quality score first"))],
    )

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
