"""Forms of the end-user pages: filters, create, edit, compliance notes and reviews."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

from console.forms import IsoDateField
from console.inputs import TextField
from users.models import EndUserStatus, EndUserType, VerificationStatus
from users.validation import country_choices


def _country_field(**kwargs: Any) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=gettext_lazy("Country"),
        choices=[("", gettext_lazy("Choose a country…")), *country_choices()],
        help_text=gettext_lazy("From the ISO 3166 list."),
        **kwargs,
    )


class EndUserFilterForm(forms.Form):
    q = forms.CharField(
        label=gettext_lazy("Search"),
        required=False,
        help_text=gettext_lazy("Email, name, phone or id."),
    )
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[("", gettext_lazy("Any status")), *EndUserStatus.choices],
    )
    verification_status = forms.ChoiceField(
        label=gettext_lazy("Verification"),
        required=False,
        choices=[("", gettext_lazy("Any")), *VerificationStatus.choices],
    )
    created_from = IsoDateField(label=gettext_lazy("Created from"), required=False)
    created_to = IsoDateField(label=gettext_lazy("Created to"), required=False)


class KycQueueFilterForm(forms.Form):
    """The queue's filters; without any, the queue shows who is not reviewed yet."""

    verification_status = forms.ChoiceField(
        label=gettext_lazy("Verification"),
        required=False,
        choices=[
            ("", gettext_lazy("Rejected or waiting")),
            ("rejected", VerificationStatus.REJECTED.label),
            ("not_started", gettext_lazy("Waiting for a decision")),
        ],
    )
    reviewed = forms.ChoiceField(
        label=gettext_lazy("Reviewed"),
        required=False,
        initial="no",
        choices=[
            ("no", gettext_lazy("Not reviewed yet")),
            ("yes", gettext_lazy("Reviewed")),
            ("all", gettext_lazy("All")),
        ],
    )


class EndUserForm(forms.Form):
    # The submission id: a double submit (or a retry after no answer) finds the same user.
    request_key = forms.UUIDField(widget=forms.HiddenInput, initial=uuid.uuid4)
    type = forms.ChoiceField(
        label=gettext_lazy("Type"),
        choices=EndUserType.choices,
        initial=EndUserType.INDIVIDUAL,
        widget=forms.RadioSelect,
        help_text=gettext_lazy("Individuals go through KYC, businesses through KYB."),
    )
    email = forms.EmailField(label=gettext_lazy("Email"))
    phone_number = TextField(
        label=gettext_lazy("Phone number"),
        help_text=gettext_lazy("International form, e.g. +52 55 1234 5678 (stored as E.164)."),
    )
    first_name = TextField(label=gettext_lazy("First name"), max_length=200)
    last_name = TextField(label=gettext_lazy("Last name"), max_length=200)
    country = _country_field()


class EndUserEditForm(forms.Form):
    email = forms.EmailField(label=gettext_lazy("Email"))
    phone_number = TextField(
        label=gettext_lazy("Phone number"), help_text=gettext_lazy("International form.")
    )
    first_name = TextField(
        label=gettext_lazy("First name"),
        max_length=200,
        help_text=gettext_lazy("Changing it restarts verification."),
    )
    last_name = TextField(
        label=gettext_lazy("Last name"),
        max_length=200,
        help_text=gettext_lazy("Changing it restarts verification."),
    )
    country = _country_field()
    confirm_reverification = forms.BooleanField(
        required=False,
        label=gettext_lazy(
            "I understand that changing the name or country restarts identity verification"
        ),
    )


class KycNoteForm(forms.Form):
    text = TextField(
        label=gettext_lazy("Compliance note"),
        widget=forms.Textarea(attrs={"rows": 3}),
        multiline=True,
    )


class KycReviewForm(forms.Form):
    reason = TextField(
        label=gettext_lazy("Reason"),
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=gettext_lazy(
            "Why this result is acceptable as it stands, or what was asked of the user."
        ),
        multiline=True,
    )
