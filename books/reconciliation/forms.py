"""Forms of the reconciliation pages: the queue's filter bar and the exception's actions."""

from __future__ import annotations

from typing import Any

from django import forms

from books.reconciliation.models import ExceptionKind, ExceptionState
from console.inputs import TextField

STATE_CHOICES = [
    ("", "Any state"),
    ("unresolved", "Open or investigating"),
    *ExceptionState.choices,
]
SORT_CHOICES = [
    ("-created", "Newest first"),
    ("created", "Oldest first"),
    ("-updated", "Recently updated"),
    ("kind", "Kind"),
    ("-difference", "Largest difference"),
    ("difference", "Smallest difference"),
]


class ExceptionFilterForm(forms.Form):
    state = forms.ChoiceField(required=False, choices=STATE_CHOICES, label="State")
    kind = forms.ChoiceField(
        required=False, choices=[("", "Any kind"), *ExceptionKind.choices], label="Kind"
    )
    owner = forms.ChoiceField(required=False, label="Owner")
    environment = forms.ChoiceField(required=False, label="Environment")
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES, label="Sort")

    def __init__(
        self,
        *args: Any,
        owners: list[tuple[str, str]],
        environments: list[tuple[str, str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["owner"].choices = [("", "Anyone"), ("none", "Nobody"), *owners]  # type: ignore[attr-defined]
        self.fields["environment"].choices = [("", "Current"), *environments]  # type: ignore[attr-defined]

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        owner = data.get("owner") or ""
        return {
            "state": data.get("state") or ("" if self.is_bound else "unresolved"),
            "kind": data.get("kind") or "",
            "owner_id": int(owner) if owner.isdigit() else None,
            "unowned": owner == "none",
            "environment": data.get("environment") or "",
            "sort": data.get("sort") or "-created",
        }


class AssignForm(forms.Form):
    owner = forms.ChoiceField(required=False, label="Owner")

    def __init__(self, *args: Any, owners: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["owner"].choices = [("", "Nobody"), *owners]  # type: ignore[attr-defined]


class CommentForm(forms.Form):
    body = TextField(
        max_length=2000, multiline=True, label="Comment", widget=forms.Textarea(attrs={"rows": 3})
    )


class StateForm(forms.Form):
    state = forms.ChoiceField(choices=ExceptionState.choices, label="State")
    reason = TextField(required=False, max_length=500, label="Reason (to resolve)")


class ReasonForm(forms.Form):
    reason = TextField(max_length=500, label="What explains it")
