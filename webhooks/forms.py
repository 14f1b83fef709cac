"""The event log's filter form."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext, gettext_lazy

from console.forms import IsoDateTimeField
from gateway.models import Environment
from webhooks.contract import EVENT_KINDS

STATUS_CHOICES = [
    ("", gettext_lazy("Any status")),
    ("processed", gettext_lazy("Processed")),
    ("failed", gettext_lazy("Failed")),
    ("unhandled", gettext_lazy("Unhandled")),
    ("no_handler", gettext_lazy("No handler yet")),
    ("pending", gettext_lazy("Pending")),
    ("invalid", gettext_lazy("Invalid signature / refused")),
    ("drift", gettext_lazy("Contract drift")),
]
OBJECT_CHOICES = [
    ("", gettext_lazy("Any object")),
    ("user", gettext_lazy("User")),
    ("virtual_account", gettext_lazy("Virtual account")),
    ("payout", gettext_lazy("Payout")),
    ("recipient", gettext_lazy("Recipient")),
    ("quote", gettext_lazy("Quote")),
    ("payment_link", gettext_lazy("Payment link")),
]


class EventFilterForm(forms.Form):
    q = forms.CharField(
        label=gettext_lazy("Search"),
        required=False,
        max_length=100,
        help_text=gettext_lazy("The event's id or any upstream id"),
    )
    event_type = forms.ChoiceField(label=gettext_lazy("Type"), required=False)
    status = forms.ChoiceField(label=gettext_lazy("Status"), required=False, choices=STATUS_CHOICES)
    object_kind = forms.ChoiceField(
        label=gettext_lazy("Object"), required=False, choices=OBJECT_CHOICES
    )
    environment = forms.ModelChoiceField(
        label=gettext_lazy("Environment"), required=False, queryset=Environment.objects.all()
    )
    received_from = IsoDateTimeField(label=gettext_lazy("From (UTC)"), required=False)
    received_to = IsoDateTimeField(label=gettext_lazy("To (UTC)"), required=False)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["event_type"].choices = [("", gettext("Any type"))] + [  # type: ignore[attr-defined]
            (name, name) for name in EVENT_KINDS
        ]
        self.fields["event_type"].widget = forms.TextInput(attrs={"list": "event-types"})
