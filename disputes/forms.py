"""The agent's dispute form and the lead's resolution form: one set of fields per criterion, named
`<key>-...`, so each works with the keyboard alone and each message shows at its criterion."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from disputes.selectors import CriterionLine
from disputes.services import CriterionResolution, DisputedValue
from disputes.models import DisputedCriterion

NOT_APPLICABLE = "na"


def value_choices(criterion, *, blank: str) -> list[tuple[str, str]]:
    choices = [("", blank)] + [(str(v), str(v)) for v in range(criterion.scale_min, criterion.scale_max + 1)]
    if criterion.allows_not_applicable():
        choices.append((NOT_APPLICABLE, str(_("N/A"))))
    return choices


def parse_value(text: str) -> tuple[int | None, bool]:
    """A chosen value: (number, not applicable)."""
    if text == NOT_APPLICABLE:
        return None, True
    return (int(text), False) if text else (None, False)


class AcknowledgeForm(forms.Form):
    comment = forms.CharField(
        label=_("Comment (optional)"), required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2})
    )


class DisputeForm(forms.Form):
    def __init__(self, *args, lines: list[CriterionLine], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lines = lines
        for line in lines:
            key = line.criterion.key
            self.fields[f"{key}-disputed"] = forms.BooleanField(
                label=_("Dispute “%(title)s”") % {"title": line.criterion.title}, required=False
            )
            self.fields[f"{key}-value"] = forms.ChoiceField(
                label=_("The right value"), required=False, choices=value_choices(line.criterion, blank="—")
            )
            self.fields[f"{key}-reason"] = forms.CharField(
                label=_("Why"), required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 3})
            )

    def rows(self) -> list[dict]:
        return [
            {"line": line, **{part: self[f"{line.criterion.key}-{part}"] for part in ("disputed", "value", "reason")}}
            for line in self.lines
        ]

    def error_summary(self) -> list[tuple[str, str]]:
        """(the field's id, or "" for the form's, message) for each error, the form's first: the summary at the
        form's top, where the page opens after sending, links each to its field."""
        summary = [("", str(error)) for error in self.non_field_errors()]
        for line in self.lines:
            field = self[f"{line.criterion.key}-reason"]
            summary += [(field.id_for_label, f"{line.criterion.title}: {error}") for error in field.errors]
        return summary

    def values(self) -> list[DisputedValue]:
        chosen = []
        for line in self.lines:
            key = line.criterion.key
            if self.cleaned_data.get(f"{key}-disputed"):
                value, not_applicable = parse_value(self.cleaned_data[f"{key}-value"])
                chosen.append(DisputedValue(key, value, not_applicable, self.cleaned_data[f"{key}-reason"]))
        return chosen

    def add_service_errors(self, errors: dict) -> None:
        criteria = errors.get("criteria")
        if isinstance(criteria, dict):
            for key, message in criteria.items():
                self.add_error(f"{key}-reason" if f"{key}-reason" in self.fields else None, message)
        elif criteria:
            self.add_error(None, criteria)


class ResolveForm(forms.Form):
    comment = forms.CharField(
        label=_("Overall comment (optional)"), required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args, disputed: list[DisputedCriterion], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.disputed = disputed
        for entry in disputed:
            key = entry.criterion.key
            self.fields[f"{key}-outcome"] = forms.ChoiceField(
                label=_("Outcome"),
                required=False,
                widget=forms.RadioSelect,
                choices=[(DisputedCriterion.Outcome.UPHELD, _("Uphold")), (DisputedCriterion.Outcome.REJECTED, _("Reject"))],
            )
            self.fields[f"{key}-value"] = forms.ChoiceField(
                label=_("Value if upheld"),
                required=False,
                choices=value_choices(entry.criterion, blank=str(_("the agent's value"))),
            )
            self.fields[f"{key}-comment"] = forms.CharField(
                label=_("Comment (required)"), required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 3})
            )

    def rows(self) -> list[dict]:
        return [
            {"entry": entry, **{part: self[f"{entry.criterion.key}-{part}"] for part in ("outcome", "value", "comment")}}
            for entry in self.disputed
        ]

    def resolutions(self) -> list[CriterionResolution]:
        found = []
        for entry in self.disputed:
            key = entry.criterion.key
            value, not_applicable = parse_value(self.cleaned_data[f"{key}-value"])
            found.append(
                CriterionResolution(
                    key, self.cleaned_data[f"{key}-outcome"], self.cleaned_data[f"{key}-comment"], value, not_applicable
                )
            )
        return found

    def add_service_errors(self, errors: dict) -> None:
        criteria = errors.get("criteria")
        if isinstance(criteria, dict):
            for key, message in criteria.items():
                self.add_error(f"{key}-comment" if f"{key}-comment" in self.fields else None, message)
        for field, message in errors.items():
            if field != "criteria":
                self.add_error(None, message if isinstance(message, str) else str(message))
