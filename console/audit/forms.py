"""The audit page's filter bar."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy

from console.audit.selectors import SYSTEM, AuditFilters, day_after, day_start
from console.forms import IsoDateField
from console.inputs import TextField

SORT_CHOICES = [("newest", gettext_lazy("Newest first")), ("oldest", gettext_lazy("Oldest first"))]


class AuditFilterForm(forms.Form):
    person = forms.ChoiceField(required=False, label=gettext_lazy("Person"))
    action = TextField(
        required=False,
        max_length=100,
        label=gettext_lazy("Action starts with"),
        help_text=gettext_lazy("e.g. payout."),
    )
    target_type = TextField(
        required=False,
        max_length=100,
        label=gettext_lazy("Object type"),
        help_text=gettext_lazy("Filled in when you pick an object in the list."),
    )
    target_id = TextField(required=False, max_length=100, label=gettext_lazy("Object id"))
    since = IsoDateField(required=False, label=gettext_lazy("From (day)"))
    until = IsoDateField(required=False, label=gettext_lazy("To (day, included)"))
    text = TextField(required=False, max_length=200, label=gettext_lazy("Search"))
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES, label=gettext_lazy("Sort"))

    def __init__(self, *args: Any, people: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["person"].choices = [  # type: ignore[attr-defined]
            ("", gettext("Anyone")),
            (SYSTEM, gettext("The system")),
            *people,
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and until < since:
            self.add_error("until", "must be on or after the From day")
        return cleaned

    def filters(self) -> AuditFilters:
        """The valid filters (a field with an error is left out, and shows its error)."""
        data = self.cleaned_data if self.is_bound else {}
        return AuditFilters(
            person=data.get("person") or "",
            target_type=data.get("target_type") or "",
            target_id=data.get("target_id") or "",
            action=data.get("action") or "",
            since=day_start(data.get("since")),
            until=day_after(data.get("until")) if "until" in data else None,
            text=data.get("text") or "",
            sort=data.get("sort") or "newest",
        )
