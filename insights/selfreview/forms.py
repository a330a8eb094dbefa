"""The agent's blind self-review form: one choice per criterion of the call's rubric, on its scale, N/A where the
rubric lets the criterion not apply; nothing of the judge's or the supervisor's."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from insights.selfreview.services import NOT_APPLICABLE
from rubrics.models import Criterion


class SelfReviewForm(forms.Form):
    def __init__(self, *args, criteria: list[Criterion], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.criteria = criteria
        for criterion in criteria:
            choices = [("", "—")] + [(str(v), str(v)) for v in range(criterion.scale_min, criterion.scale_max + 1)]
            if criterion.allows_not_applicable():
                choices.append((NOT_APPLICABLE, _("N/A")))
            self.fields[criterion.key] = forms.ChoiceField(
                label=criterion.title, choices=choices, required=True, help_text=criterion.description,
                error_messages={"required": _("Give your value for this criterion.")},
            )  # fmt: skip

    def values(self) -> dict[str, int | str]:
        return {
            key: value if value == NOT_APPLICABLE else int(value) for key, value in self.cleaned_data.items()
        }

    def rows(self) -> list[tuple[Criterion, forms.BoundField]]:
        return [(criterion, self[criterion.key]) for criterion in self.criteria]

    def add_service_errors(self, errors: dict) -> None:
        for field, message in errors.items():
            self.add_error(field if field in self.fields else None, str(message))
