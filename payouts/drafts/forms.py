"""Draft forms: the draft itself, a supporting document, sending it for approval."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django import forms
from django.db.models import QuerySet
from django.forms.models import ModelChoiceIterator
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from accounts.models import Recipient, VirtualAccount, VirtualAccountMode
from console.inputs import AmountField, TextField
from console.templatetags.ui import money
from gateway.models import Environment
from payouts import selectors
from payouts.drafts.services import DraftValues
from payouts.models import INTERNAL_NOTES_MAX, MEMO_MAX, REFERENCE_MAX, DocumentKind
from quotes.choices import STABLECOINS, Choices
from quotes.forms import choice_field
from quotes.models import Quote, QuoteStatus

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


# A service's field names that the draft form spells otherwise.
DRAFT_FIELDS = {"client_markup": "client_markup_fixed_fee"}


def _ending(number: str, upstream_id: str) -> str:
    """What tells one account from another of the same holder: its number's last four, else
    (not issued yet) the end of its upstream id."""
    if number:
        return f"…{number[-4:]}"
    return gettext("id …%(end)s") % {"end": upstream_id[-6:]} if upstream_id else ""


class AccountChoiceField(forms.ModelChoiceField):
    """An account named by what tells it apart: holder, currency and mode, number, balance."""

    def label_from_instance(self, obj: VirtualAccount) -> str:
        if obj.mode == VirtualAccountMode.CRYPTO:
            kind = gettext("%(currency)s crypto") % {"currency": obj.currency}
            balance = gettext("funded by stablecoin per payout")
        else:
            kind = gettext("%(currency)s fiat") % {"currency": obj.currency}
            balance = gettext("balance unknown")
            if obj.available_balance is not None:
                balance = gettext("balance %(amount)s") % {
                    "amount": money(obj.available_balance, obj.currency)
                }
        ending = _ending(obj.account_number, obj.upstream_id)
        return " · ".join(p for p in (obj.end_user.display_name, kind, ending, balance) if p)


class _OfferedChoices(ModelChoiceIterator):
    """The choices of a `RecipientChoiceField`: its `offered` rows when it has them."""

    def __init__(self, field: RecipientChoiceField) -> None:
        super().__init__(field)
        if field.offered is not None:
            self.queryset = field.offered


class RecipientChoiceField(forms.ModelChoiceField):
    """A recipient named by what tells it apart: name, rail, bank (and country), last four.

    It validates against `queryset` (every recipient a form may name, so the service says why
    one is not payable) but offers only `offered` (the payable ones)."""

    iterator = _OfferedChoices
    offered: QuerySet[Recipient] | None = None

    def label_from_instance(self, obj: Recipient) -> str:
        bank = obj.bank_name or obj.swift_code or obj.routing_number
        where = f"{bank} ({obj.country})" if bank else obj.country
        return f"{obj.display_name} · {obj.account_type} · {where} · {obj.masked_account_number}"


class QuoteChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Quote) -> str:
        send = money(obj.base_amount, obj.base_currency)
        gets = money(obj.quote_amount, obj.quote_currency)
        return gettext("%(send)s → %(gets)s %(account_type)s (until %(time)s UTC)") % {
            "send": send,
            "gets": gets,
            "account_type": obj.account_type,
            "time": f"{obj.expires_at:%H:%M:%S}",
        }


def _fraction_field(label: StrOrPromise) -> AmountField:
    """A client markup given as a fraction of the amount (0.01 is 1 %), below 1."""
    return AmountField(
        max_digits=10,
        decimal_places=6,
        min_value=Decimal(0),
        max_value=Decimal("0.99"),
        required=False,
        label=label,
    )


class PayoutDraftForm(forms.Form):
    virtual_account = AccountChoiceField(
        queryset=VirtualAccount.objects.none(), label=gettext_lazy("Pay from")
    )
    recipient = RecipientChoiceField(
        queryset=Recipient.objects.none(), label=gettext_lazy("Recipient")
    )
    amount = AmountField(
        label=gettext_lazy("Amount"),
        max_digits=8,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=Decimal("999999.99"),
        required=False,
        help_text=gettext_lazy("USD, up to 999,999.99. Leave blank to take the quote's amount."),
    )
    quote = QuoteChoiceField(
        queryset=Quote.objects.none(),
        required=False,
        label=gettext_lazy("Active quote"),
        help_text=gettext_lazy(
            "Optional: locks the rate and fees (USD to USD on the recipient's rail)."
        ),
    )
    reference = TextField(label=gettext_lazy("Reference"), max_length=REFERENCE_MAX, required=False)
    memo = TextField(label=gettext_lazy("Memo"), max_length=MEMO_MAX, required=False)
    internal_notes = TextField(
        label=gettext_lazy("Internal notes"),
        max_length=INTERNAL_NOTES_MAX,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        multiline=True,
    )
    client_markup_fixed_fee = AmountField(
        max_digits=10,
        decimal_places=2,
        min_value=Decimal(0),
        required=False,
        label=gettext_lazy("Client markup: fixed fee (USD)"),
        help_text=gettext_lazy("Only without a quote."),
    )
    client_markup_percentage_fee = _fraction_field(
        gettext_lazy("Client markup: percentage (fraction, 0.01 = 1 %)")
    )
    client_markup_fx_markup = _fraction_field(gettext_lazy("Client markup: FX markup (fraction)"))
    payment_currency = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Stablecoin (crypto accounts)"),
        choices=[("", "—"), *[(c, c) for c in STABLECOINS]],
    )
    payment_network = forms.ChoiceField(
        required=False, label=gettext_lazy("Network (crypto accounts)")
    )

    def __init__(self, *args: Any, environment: Environment | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Help texts with a number: made here, in the request's language.
        self.fields["memo"].help_text = gettext("Sent to the upstream; at most %(max)s.") % {
            "max": MEMO_MAX
        }
        self.fields["internal_notes"].help_text = gettext(
            "Sent to the upstream as the payout's extra information; at most %(max)s characters."
        ) % {"max": INTERNAL_NOTES_MAX}
        self.fields["virtual_account"].queryset = selectors.active_virtual_accounts(environment)  # type: ignore[attr-defined]
        recipient = self.fields["recipient"]
        recipient.offered = selectors.payout_recipients(environment)  # type: ignore[attr-defined]
        recipient.queryset = selectors.payout_recipients_named(environment)  # type: ignore[attr-defined]
        self.fields["quote"].queryset = Quote.objects.filter(  # type: ignore[attr-defined]
            environment=environment, status=QuoteStatus.ACTIVE, expires_at__gt=timezone.now()
        )
        choices = Choices(environment)
        networks = sorted({n for coin in STABLECOINS for n in choices.networks(coin)})
        choice_field(self, "payment_network").choices = [("", "—"), *[(n, n) for n in networks]]

    def values(self) -> DraftValues:
        data = self.cleaned_data
        markup_keys = ("fixed_fee", "percentage_fee", "fx_markup")
        markup = {key: data.get(f"client_markup_{key}") for key in markup_keys}
        return DraftValues(
            virtual_account=data["virtual_account"],
            recipient=data["recipient"],
            amount=data.get("amount"),
            quote=data.get("quote"),
            clear_quote=data.get("quote") is None,
            reference=data.get("reference", ""),
            memo=data.get("memo", ""),
            internal_notes=data.get("internal_notes", ""),
            client_markup=markup,
            payment_currency=data.get("payment_currency", ""),
            payment_network=data.get("payment_network", ""),
        )


class DocumentForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Supporting document"), allow_empty_file=True)
    kind = forms.ChoiceField(
        choices=DocumentKind.choices, initial=DocumentKind.INVOICE, label=gettext_lazy("Type")
    )


class SubmitForm(forms.Form):
    confirm_duplicate = forms.BooleanField(
        required=False, label=gettext_lazy("Submit although an identical payout is pending")
    )
