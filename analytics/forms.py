"""The analytics page's filter bar: a period (UTC days) and an environment."""

from __future__ import annotations

from typing import Any

from django import forms

from books.statements.forms import PeriodForm


class AnalyticsForm(PeriodForm):
    environment = forms.ChoiceField(required=False, label="Environment")

    def __init__(self, *args: Any, environments: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["environment"].choices = [("", "All environments"), *environments]  # type: ignore[attr-defined]
