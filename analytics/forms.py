"""The analytics page's filter bar: a period (UTC days) and an environment."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy

from books.statements.forms import PeriodForm


class AnalyticsForm(PeriodForm):
    environment = forms.ChoiceField(required=False, label=gettext_lazy("Environment"))

    def __init__(self, *args: Any, environments: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["environment"].choices = [("", gettext("All environments")), *environments]  # type: ignore[attr-defined]
