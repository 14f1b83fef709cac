"""Forms of the account pages: open a virtual account, register a recipient, list filters."""

from __future__ import annotations

import uuid

from django import forms
from django.utils.translation import gettext_lazy

from accounts.models import (
    AccountType,
    RecipientKind,
    RecipientStatus,
    VirtualAccountMode,
    VirtualAccountStatus,
)
from console.forms import show_when
from console.inputs import TextField
from users.models import EndUser
from users.validation import country_choices

# Service field names (the API's) -> the form's: errors land on the field the person typed in.
RECIPIENT_ERROR_FIELDS = {"end_user_id": "end_user"}
VIRTUAL_ACCOUNT_ERROR_FIELDS = {"end_user_id": "end_user"}


class EndUserChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: EndUser) -> str:
        return f"{obj.display_name} <{obj.email}> — {obj.get_verification_status_display()}"


class VirtualAccountForm(forms.Form):
    request_key = forms.UUIDField(widget=forms.HiddenInput, initial=uuid.uuid4)
    end_user = EndUserChoiceField(
        queryset=EndUser.objects.none(),
        label=gettext_lazy("End user"),
        help_text=gettext_lazy("Only verified end users can have a virtual account."),
    )
    mode = forms.ChoiceField(
        label=gettext_lazy("Mode"),
        choices=VirtualAccountMode.choices,
        initial=VirtualAccountMode.FIAT,
        widget=forms.RadioSelect,
    )

    def __init__(self, *args: object, end_users: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["end_user"].queryset = end_users  # type: ignore[attr-defined]


class VirtualAccountFilterForm(forms.Form):
    q = forms.CharField(
        label=gettext_lazy("Search"),
        required=False,
        help_text=gettext_lazy("End user, account ending, id."),
    )
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[("", gettext_lazy("Any status")), *VirtualAccountStatus.choices],
    )
    mode = forms.ChoiceField(
        label=gettext_lazy("Mode"),
        required=False,
        choices=[("", gettext_lazy("Any mode")), *VirtualAccountMode.choices],
    )


class RecipientForm(forms.Form):
    request_key = forms.UUIDField(widget=forms.HiddenInput, initial=uuid.uuid4)
    end_user = EndUserChoiceField(queryset=EndUser.objects.none(), label=gettext_lazy("End user"))
    kind = forms.ChoiceField(
        label=gettext_lazy("Recipient is"),
        choices=RecipientKind.choices,
        initial=RecipientKind.INDIVIDUAL,
        widget=forms.RadioSelect,
    )
    first_name = TextField(
        label=gettext_lazy("First name"), required=False, help_text=gettext_lazy("For a person.")
    )
    last_name = TextField(
        label=gettext_lazy("Last name"), required=False, help_text=gettext_lazy("For a person.")
    )
    company_name = TextField(
        label=gettext_lazy("Company name"),
        required=False,
        help_text=gettext_lazy("For a company."),
    )
    email = forms.EmailField(label=gettext_lazy("Email"), required=False)
    street_name = TextField(label=gettext_lazy("Street and number"))
    city = TextField(label=gettext_lazy("City"))
    state = TextField(required=False, label=gettext_lazy("State or region"))
    postal_code = TextField(label=gettext_lazy("Postal code"), required=False)
    country = forms.ChoiceField(
        label=gettext_lazy("Country"),
        choices=[("", gettext_lazy("Choose a country…")), *country_choices()],
    )
    account_type = forms.ChoiceField(
        label=gettext_lazy("Bank transfer"), choices=AccountType.choices, initial=AccountType.WIRE
    )
    account_number = TextField(
        label=gettext_lazy("Account number or IBAN"),
        help_text=gettext_lazy(
            "WIRE: the US account number. SWIFT: the IBAN where the bank's country uses one."
        ),
    )
    routing_number = TextField(
        required=False,
        label=gettext_lazy("ABA routing number"),
        help_text=gettext_lazy("WIRE only: 9 digits."),
    )
    swift_code = TextField(
        required=False,
        label=gettext_lazy("SWIFT/BIC"),
        help_text=gettext_lazy("SWIFT only: 8 or 11 characters."),
    )
    bank_name = TextField(label=gettext_lazy("Bank name"), required=False)

    def __init__(self, *args: object, end_users: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["end_user"].queryset = end_users  # type: ignore[attr-defined]
        # Each kind and each transfer shows only its own fields (the service ignores the others).
        for name in ("first_name", "last_name"):
            show_when(self.fields[name], "kind", RecipientKind.INDIVIDUAL)
        show_when(self.fields["company_name"], "kind", RecipientKind.COMPANY)
        show_when(self.fields["routing_number"], "account_type", AccountType.WIRE)
        show_when(self.fields["swift_code"], "account_type", AccountType.SWIFT)


class RecipientEditForm(RecipientForm):
    """A change of names, address or bank details: it waits for a second person's approval."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, end_users=EndUser.objects.none(), **kwargs)
        del self.fields["end_user"]
        del self.fields["request_key"]


class RecipientRejectForm(forms.Form):
    reason = TextField(
        label=gettext_lazy("Reason"),
        max_length=500,
        help_text=gettext_lazy("The proposer reads it."),
    )


class RecipientArchiveForm(forms.Form):
    reason = TextField(label=gettext_lazy("Reason"), max_length=500, required=False)


class RecipientFilterForm(forms.Form):
    q = forms.CharField(
        label=gettext_lazy("Search"),
        required=False,
        help_text=gettext_lazy("Name, company, email, id."),
    )
    account_type = forms.ChoiceField(
        label=gettext_lazy("Transfer"),
        required=False,
        choices=[("", gettext_lazy("Any")), *AccountType.choices],
    )
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        required=False,
        choices=[
            ("", gettext_lazy("In use")),
            ("pending", gettext_lazy("Waiting for approval (new or changed)")),
            *RecipientStatus.choices,
        ],
    )
