"""Forms of the quote builder, the amount change and the quote list's filters."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from console.forms import IsoDateField
from console.inputs import AmountField
from quotes.choices import Choices, names
from quotes.models import Quote, QuoteStatus


def choice_field(form: forms.Form, name: str) -> forms.ChoiceField:
    """The form's choice field `name` (typed, so its choices can be set)."""
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    return field


AMOUNT_MODES = (
    ("source", gettext_lazy("Amount to send (source currency)")),
    ("destination", gettext_lazy("Amount the recipient gets (destination currency)")),
)


class QuoteRequestForm(forms.Form):
    """
    The builder. Currencies, rails and networks come from the environment's valid_* lists; the
    rail and network lists follow the chosen currencies (the page re-renders them over HTMX).
    Combinations the lists cannot judge (an enabled pair) are left to the upstream, whose answer
    lands on the field it concerns.
    """

    base_currency = forms.ChoiceField(label=gettext_lazy("Source currency"))
    quote_currency = forms.ChoiceField(label=gettext_lazy("Destination currency"))
    account_type = forms.ChoiceField(
        label=gettext_lazy("Payment rail"),
        required=False,
        help_text=gettext_lazy("Blank: the currency's default rail."),
    )
    network = forms.ChoiceField(
        label=gettext_lazy("Network"),
        required=False,
        help_text=gettext_lazy("Stablecoin sources only."),
    )
    amount_mode = forms.ChoiceField(
        label=gettext_lazy("Amount is"),
        choices=AMOUNT_MODES,
        initial="source",
        widget=forms.RadioSelect,
    )
    amount = AmountField(
        max_digits=11, decimal_places=2, min_value=Decimal("0.01"), label=gettext_lazy("Amount")
    )

    # The API's names of fields this form names otherwise (for ServiceError.add_to_form).
    API_NAMES = {"amount_in_destination": "amount_mode"}

    def __init__(self, *args: Any, choices: Choices, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.valid = choices
        source = self._value("base_currency") or "USD"
        destination = self._value("quote_currency") or ""
        choice_field(self, "base_currency").choices = names(choices.base_currencies())
        choice_field(self, "quote_currency").choices = [
            ("", "Choose…"),
            *names(choices.quote_currencies()),
        ]
        rails = choices.account_types(destination) if destination else []
        choice_field(self, "account_type").choices = [("", gettext("Default rail")), *names(rails)]
        networks = choices.networks(source)
        choice_field(self, "network").choices = [("", "—"), *names(networks)]
        self.fields["network"].required = bool(networks)
        if networks:
            self.fields["network"].help_text = gettext("%(source)s needs its network.") % {
                "source": source
            }

    def _value(self, name: str) -> str:
        if self.is_bound:
            return str(self.data.get(name) or "")
        return str(self.initial.get(name) or "")

    @property
    def needs_network(self) -> bool:
        return bool(self.fields["network"].required)

    def request_values(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "base_currency": data["base_currency"],
            "quote_currency": data["quote_currency"],
            "account_type": data.get("account_type") or "",
            "network": data.get("network") or "",
            "amount": data["amount"],
            "amount_in_destination": data["amount_mode"] == "destination",
        }


class QuoteAmountForm(forms.Form):
    amount = AmountField(
        max_digits=11, decimal_places=2, min_value=Decimal("0.01"), label=gettext_lazy("New amount")
    )

    def __init__(self, *args: Any, quote: Quote | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if quote is not None:  # the amount is in the currency it was asked in, as in the card
            mode = "to arrive" if quote.amount_in_destination else "to send"
            self.fields["amount"].label = gettext(
                "New amount (%(requested_currency)s, %(mode)s)"
            ) % {"requested_currency": quote.requested_currency, "mode": mode}


class QuoteFilterForm(forms.Form):
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        choices=[("", gettext_lazy("Any status")), *QuoteStatus.choices],
        required=False,
    )
    corridor = forms.ChoiceField(label=gettext_lazy("Corridor"), required=False)
    maker = forms.ChoiceField(required=False, label=gettext_lazy("Requested by"))
    date_from = IsoDateField(required=False, label=pgettext_lazy("date range", "From"))
    date_to = IsoDateField(required=False, label=pgettext_lazy("date range", "To"))

    def __init__(
        self,
        *args: Any,
        corridors: list[tuple[str, str]],
        makers: list[tuple[str, str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "corridor").choices = [("", gettext("Any corridor")), *corridors]
        choice_field(self, "maker").choices = [("", gettext("Anyone")), *makers]
