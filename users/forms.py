"""Forms of the end-user pages: filters, create, edit, compliance notes and reviews."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms

from console.forms import IsoDateField
from console.inputs import TextField
from users.models import EndUserStatus, EndUserType, VerificationStatus
from users.validation import country_choices


def _country_field(**kwargs: Any) -> forms.ChoiceField:
    return forms.ChoiceField(
        choices=[("", "Choose a country…"), *country_choices()],
        help_text="From the ISO 3166 list.",
        **kwargs,
    )


class EndUserFilterForm(forms.Form):
    q = forms.CharField(label="Search", required=False, help_text="Email, name, phone or id.")
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *EndUserStatus.choices])
    verification_status = forms.ChoiceField(
        label="Verification", required=False, choices=[("", "Any"), *VerificationStatus.choices]
    )
    created_from = IsoDateField(label="Created from", required=False)
    created_to = IsoDateField(label="Created to", required=False)


class KycQueueFilterForm(forms.Form):
    """The queue's filters; without any, the queue shows who is not reviewed yet."""

    verification_status = forms.ChoiceField(
        label="Verification",
        required=False,
        choices=[
            ("", "Rejected or waiting"),
            ("rejected", "Rejected"),
            ("not_started", "Waiting for a decision"),
        ],
    )
    reviewed = forms.ChoiceField(
        required=False,
        initial="no",
        choices=[("no", "Not reviewed yet"), ("yes", "Reviewed"), ("all", "All")],
    )


class EndUserForm(forms.Form):
    # The submission id: a double submit (or a retry after no answer) finds the same user.
    request_key = forms.UUIDField(widget=forms.HiddenInput, initial=uuid.uuid4)
    type = forms.ChoiceField(
        choices=EndUserType.choices,
        initial=EndUserType.INDIVIDUAL,
        widget=forms.RadioSelect,
        help_text="Individuals go through KYC, businesses through KYB.",
    )
    email = forms.EmailField()
    phone_number = TextField(
        label="Phone number",
        help_text="International form, e.g. +52 55 1234 5678 (stored as E.164).",
    )
    first_name = TextField(max_length=200)
    last_name = TextField(max_length=200)
    country = _country_field()


class EndUserEditForm(forms.Form):
    email = forms.EmailField()
    phone_number = TextField(label="Phone number", help_text="International form.")
    first_name = TextField(max_length=200, help_text="Changing it restarts verification.")
    last_name = TextField(max_length=200, help_text="Changing it restarts verification.")
    country = _country_field()
    confirm_reverification = forms.BooleanField(
        required=False,
        label="I understand that changing the name or country restarts identity verification",
    )


class KycNoteForm(forms.Form):
    text = TextField(
        label="Compliance note", widget=forms.Textarea(attrs={"rows": 3}), multiline=True
    )


class KycReviewForm(forms.Form):
    reason = TextField(
        label="Reason",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why this result is acceptable as it stands, or what was asked of the user.",
        multiline=True,
    )
