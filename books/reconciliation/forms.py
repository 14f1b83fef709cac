"""Forms of the reconciliation pages: the queue's filter bar and the exception's actions."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy

from books.reconciliation.models import ExceptionKind, ExceptionState
from console.inputs import TextField

STATE_CHOICES = [
    ("", gettext_lazy("Any state")),
    ("unresolved", gettext_lazy("Open or investigating")),
    *ExceptionState.choices,
]
SORT_CHOICES = [
    ("-created", gettext_lazy("Newest first")),
    ("created", gettext_lazy("Oldest first")),
    ("-updated", gettext_lazy("Recently updated")),
    ("kind", gettext_lazy("Kind")),
    ("-difference", gettext_lazy("Largest difference")),
    ("difference", gettext_lazy("Smallest difference")),
]


class ExceptionFilterForm(forms.Form):
    state = forms.ChoiceField(required=False, choices=STATE_CHOICES, label=gettext_lazy("State"))
    kind = forms.ChoiceField(
        required=False,
        choices=[("", gettext_lazy("Any kind")), *ExceptionKind.choices],
        label=gettext_lazy("Kind"),
    )
    owner = forms.ChoiceField(required=False, label=gettext_lazy("Owner"))
    environment = forms.ChoiceField(required=False, label=gettext_lazy("Environment"))
    sort = forms.ChoiceField(required=False, choices=SORT_CHOICES, label=gettext_lazy("Sort"))

    def __init__(
        self,
        *args: Any,
        owners: list[tuple[str, str]],
        environments: list[tuple[str, str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["owner"].choices = [  # type: ignore[attr-defined]
            ("", gettext("Anyone")),
            ("none", gettext("Nobody")),
            *owners,
        ]
        self.fields["environment"].choices = [("", gettext("Current")), *environments]  # type: ignore[attr-defined]

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
    owner = forms.ChoiceField(required=False, label=gettext_lazy("Owner"))

    def __init__(self, *args: Any, owners: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["owner"].choices = [("", gettext("Nobody")), *owners]  # type: ignore[attr-defined]


class CommentForm(forms.Form):
    body = TextField(
        max_length=2000,
        multiline=True,
        label=gettext_lazy("Comment"),
        widget=forms.Textarea(attrs={"rows": 3}),
    )


class StateForm(forms.Form):
    state = forms.ChoiceField(choices=ExceptionState.choices, label=gettext_lazy("State"))
    reason = TextField(required=False, max_length=500, label=gettext_lazy("Reason (to resolve)"))


class ReasonForm(forms.Form):
    reason = TextField(max_length=500, label=gettext_lazy("What explains it"))
