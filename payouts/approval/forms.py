"""Approval forms: the rejection's reason, and the whole approval policy as lines."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import forms

from console.inputs import TextField
from payouts.approval.rules import RuleSpec
from payouts.models import ApprovalRule


class RejectForm(forms.Form):
    reason = TextField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Reason for the maker",
        multiline=True,
    )


class PolicyForm(forms.Form):
    """The whole policy as lines: `min_amount currency rail mode approvers` (`*` for any)."""

    default_required = forms.IntegerField(min_value=1, max_value=10, initial=1)
    rules = TextField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One rule a line: minimum amount, currency, rail, mode, approvers; * is any. "
        "Example: 10000 USD * * 2",
        multiline=True,
    )
    note = TextField(required=False, max_length=255)

    def clean_rules(self) -> list[RuleSpec]:
        specs = []
        for number, line in enumerate(self.cleaned_data["rules"].splitlines(), start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 5:
                raise forms.ValidationError(
                    f"Line {number}: five values (amount currency rail mode approvers)."
                )
            amount, currency, rail, mode, required = parts
            try:
                minimum = Decimal(amount)
                count = int(required)
            except (InvalidOperation, ValueError):
                raise forms.ValidationError(
                    f"Line {number}: the amount and the approvers are numbers."
                ) from None
            if minimum < 0 or count < 1:
                raise forms.ValidationError(f"Line {number}: amount ≥ 0 and approvers ≥ 1.")
            if mode not in ("*", "fiat", "crypto"):
                raise forms.ValidationError(f"Line {number}: mode is fiat, crypto or *.")
            specs.append(
                RuleSpec(
                    required_approvals=count,
                    min_amount=minimum,
                    currency="" if currency == "*" else currency.upper(),
                    rail="" if rail == "*" else rail.upper(),
                    mode="" if mode == "*" else mode,
                )
            )
        return specs


def rule_line(rule: ApprovalRule) -> str:
    return " ".join(
        [
            str(rule.min_amount),
            rule.currency or "*",
            rule.rail or "*",
            rule.mode or "*",
            str(rule.required_approvals),
        ]
    )
