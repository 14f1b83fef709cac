"""The event log's filter form."""

from __future__ import annotations

from django import forms

from console.forms import IsoDateTimeField
from gateway.models import Environment
from webhooks.contract import EVENT_KINDS

STATUS_CHOICES = [
    ("", "Any status"),
    ("processed", "Processed"),
    ("failed", "Failed"),
    ("unhandled", "Unhandled"),
    ("no_handler", "No handler yet"),
    ("pending", "Pending"),
    ("invalid", "Invalid signature / refused"),
    ("drift", "Contract drift"),
]
OBJECT_CHOICES = [
    ("", "Any object"),
    ("user", "User"),
    ("virtual_account", "Virtual account"),
    ("payout", "Payout"),
    ("recipient", "Recipient"),
    ("quote", "Quote"),
    ("payment_link", "Payment link"),
]


class EventFilterForm(forms.Form):
    q = forms.CharField(
        label="Search", required=False, max_length=100, help_text="event_id or any upstream id"
    )
    event_type = forms.ChoiceField(label="Type", required=False)
    status = forms.ChoiceField(label="Status", required=False, choices=STATUS_CHOICES)
    object_kind = forms.ChoiceField(label="Object", required=False, choices=OBJECT_CHOICES)
    environment = forms.ModelChoiceField(
        label="Environment", required=False, queryset=Environment.objects.all()
    )
    received_from = IsoDateTimeField(label="From (UTC)", required=False)
    received_to = IsoDateTimeField(label="To (UTC)", required=False)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["event_type"].choices = [("", "Any type")] + [  # type: ignore[attr-defined]
            (name, name) for name in EVENT_KINDS
        ]
        self.fields["event_type"].widget = forms.TextInput(attrs={"list": "event-types"})
