"""The payout list's filters (search, status, maker, corridor, amounts, dates)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from console.forms import IsoDateField
from console.inputs import AmountField
from payouts import selectors
from payouts.models import PayoutStatus
from quotes.forms import choice_field


class PayoutFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=selectors.SEARCH_MAX_LENGTH,
        label=gettext_lazy("Search"),
        help_text=gettext_lazy("Reference, recipient, upstream id or amount (539 or 539.00)."),
        widget=forms.TextInput(attrs={"type": "search"}),
    )
    status = forms.ChoiceField(
        label=gettext_lazy("Status"),
        choices=[("", gettext_lazy("Any status")), *PayoutStatus.choices],
        required=False,
    )
    maker = forms.ChoiceField(label=gettext_lazy("Maker"), required=False)
    corridor = forms.ChoiceField(label=gettext_lazy("Corridor"), required=False)
    amount_min = AmountField(required=False, min_value=0, label=gettext_lazy("Amount from"))
    amount_max = AmountField(required=False, min_value=0, label=gettext_lazy("Amount to"))
    date_from = IsoDateField(required=False, label=pgettext_lazy("date range", "From"))
    date_to = IsoDateField(required=False, label=pgettext_lazy("date range", "To"))

    def __init__(self, *args: Any, makers: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "maker").choices = [("", gettext("Anyone")), *makers]
        choice_field(self, "corridor").choices = [
            ("", gettext("Any corridor")),
            *selectors.corridors(),
        ]
