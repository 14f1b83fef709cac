"""Approval forms: the rejection's reason, and the whole approval policy as lines."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.utils.translation import gettext, gettext_lazy

from console.inputs import AmountField, TextField
from payouts.approval.rules import (
    CHANNELS,
    LIMIT_SUBJECTS,
    Chain,
    ChainStep,
    LimitSpec,
    RuleSpec,
)
from payouts.approval.selectors import INBOX_SORTS, SCOPE_ANYONE, SCOPE_MINE
from payouts.models import ApprovalRule
from payouts.selectors import SEARCH_MAX_LENGTH, corridors
from quotes.forms import choice_field
from staff.roles import ROLES


class InboxFilterForm(forms.Form):
    """The inbox's filter bar: whose inbox, the payout list's search and filters, the order."""

    scope = forms.ChoiceField(
        choices=[
            (SCOPE_MINE, gettext_lazy("Waiting for me")),
            (SCOPE_ANYONE, gettext_lazy("Waiting for anyone")),
        ],
        required=False,
        label=gettext_lazy("Waiting for"),
    )
    q = forms.CharField(
        required=False,
        max_length=SEARCH_MAX_LENGTH,
        label=gettext_lazy("Search"),
        help_text=gettext_lazy("Reference, recipient, upstream id or amount (539 or 539.00)."),
        widget=forms.TextInput(attrs={"type": "search"}),
    )
    maker = forms.ChoiceField(label=gettext_lazy("Maker"), required=False)
    corridor = forms.ChoiceField(label=gettext_lazy("Corridor"), required=False)
    amount_min = AmountField(required=False, min_value=0, label=gettext_lazy("Amount from"))
    amount_max = AmountField(required=False, min_value=0, label=gettext_lazy("Amount to"))
    sort = forms.ChoiceField(
        choices=[(key, label) for key, (label, _) in INBOX_SORTS.items()],
        required=False,
        label=gettext_lazy("Order"),
    )

    def __init__(self, *args: Any, makers: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choice_field(self, "maker").choices = [("", gettext("Anyone")), *makers]
        choice_field(self, "corridor").choices = [("", gettext("Any corridor")), *corridors()]


class RejectForm(forms.Form):
    reason = TextField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        label=gettext_lazy("Reason for the maker"),
        multiline=True,
    )


CONDITION_KEYS = ("country", "channel", "makers", "maker_roles", "recipient_under_days")


def parse_chain(text: str, number: int) -> tuple[int, Chain]:
    """`2` (two approvers, any) or `finance_approver:1>admin:1` (in order, by role)."""
    if text.isdigit():
        return int(text), ()
    steps = []
    for part in text.split(">"):
        role, _, count = part.partition(":")
        if not role or not count.isdigit() or int(count) < 1:
            raise forms.ValidationError(
                gettext("Line %(number)s: approvers is a number or role:count>role:count.")
                % {"number": number}
            )
        steps.append(ChainStep("" if role == "approver" else role, int(count)))
    return sum(step.count for step in steps), tuple(steps)


def _conditions(parts: list[str], number: int) -> dict[str, str]:
    found = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or key not in CONDITION_KEYS or not value:
            raise forms.ValidationError(
                gettext("Line %(number)s: conditions are key=value, keys %(value)s.")
                % {"number": number, "value": ", ".join(CONDITION_KEYS)}
            )
        found[key] = value
    return found


def parse_rule_line(line: str, number: int) -> RuleSpec | None:
    parts = line.split()
    if not parts:
        return None
    if len(parts) < 5:
        raise forms.ValidationError(
            gettext(
                "Line %(number)s: five values (amount currency rail mode approvers), then "
                "conditions."
            )
            % {"number": number}
        )
    amount, currency, rail, mode, approvers = parts[:5]
    conditions = _conditions(parts[5:], number)
    try:
        minimum = Decimal(amount)
        count, chain = parse_chain(approvers, number)
        makers = frozenset(int(pk) for pk in conditions.get("makers", "").split(",") if pk)
        under = conditions.get("recipient_under_days")
        younger = int(under) if under is not None else None
    except (InvalidOperation, ValueError):
        raise forms.ValidationError(
            gettext("Line %(number)s: the amount, approvers, makers and days are numbers.")
            % {"number": number}
        ) from None
    if not minimum.is_finite() or minimum < 0 or count < 1:
        raise forms.ValidationError(
            gettext("Line %(number)s: amount ≥ 0 and approvers ≥ 1.") % {"number": number}
        )
    if mode not in ("*", "fiat", "crypto"):
        raise forms.ValidationError(
            gettext("Line %(number)s: mode is fiat, crypto or *.") % {"number": number}
        )
    channel = conditions.get("channel", "")
    if channel and channel not in CHANNELS:
        raise forms.ValidationError(
            gettext("Line %(number)s: channel is page or api.") % {"number": number}
        )
    return RuleSpec(
        required_approvals=count,
        min_amount=minimum,
        currency="" if currency == "*" else currency.upper(),
        rail="" if rail == "*" else rail.upper(),
        mode="" if mode == "*" else mode,
        chain=chain,
        country=conditions.get("country", "").upper(),
        channel=channel,
        maker_ids=makers,
        maker_roles=frozenset(r for r in conditions.get("maker_roles", "").split(",") if r),
        recipient_younger_than_days=younger,
    )


def parse_limit_line(line: str, number: int) -> LimitSpec | None:
    """`maker day 50000 USD` (calendar day) or `recipient 7d 100000 USD` (rolling 7 days)."""
    parts = line.split()
    if not parts:
        return None
    problem = forms.ValidationError(
        gettext(
            "Line %(number)s: subject (maker, recipient), window (day or Nd), amount, currency."
        )
        % {"number": number}
    )
    if len(parts) != 4 or parts[0] not in LIMIT_SUBJECTS:
        raise problem
    subject, window, amount, currency = parts
    if window == "day":
        days = 0
    elif window.endswith("d") and window[:-1].isdigit() and int(window[:-1]) >= 1:
        days = int(window[:-1])
    else:
        raise problem
    try:
        value = Decimal(amount)
    except InvalidOperation:
        raise problem from None
    if not value.is_finite() or value <= 0 or value.as_tuple().exponent < -2:  # type: ignore[operator]
        raise forms.ValidationError(
            gettext("Line %(number)s: an amount above 0, at most 2 decimals.") % {"number": number}
        )
    return LimitSpec(subject=subject, amount=value, currency=currency.upper(), days=days)


class WithdrawForm(forms.Form):
    reason = TextField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        label=gettext_lazy("Why you withdraw your approval"),
        multiline=True,
    )


class PolicyForm(forms.Form):
    """The whole policy as lines: rules, limits and who approves recipients."""

    default_required = forms.IntegerField(
        label=gettext_lazy("Default required"), min_value=1, max_value=10, initial=1
    )
    rules = TextField(
        label=gettext_lazy("Rules"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=gettext_lazy(
            "One rule a line: minimum amount, currency, rail, mode, approvers; * is any. "
            "Approvers is a number or an ordered chain of role:count (finance_approver:1>admin:1). "
            "Then optional conditions: country=MX channel=api makers=12,14 "
            "maker_roles=finance_maker recipient_under_days=30. "
            "Example: 10000 USD * * finance_approver:1>admin:1 channel=api"
        ),
        multiline=True,
    )
    limits = TextField(
        label=gettext_lazy("Limits"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=gettext_lazy(
            "One limit a line: maker or recipient, day (calendar day, UTC) or Nd (rolling "
            "N days), amount, currency. Example: maker 7d 100000 USD"
        ),
        multiline=True,
    )
    recipient_approver_roles = forms.MultipleChoiceField(
        label=gettext_lazy("Recipient approver roles"),
        required=False,
        choices=[(role.key, role.display_name) for role in ROLES],
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy(
            "Who may approve a new recipient (none ticked: the default setting)."
        ),
    )
    note = TextField(label=gettext_lazy("Note"), required=False, max_length=255)

    def clean_rules(self) -> list[RuleSpec]:
        lines = self.cleaned_data["rules"].splitlines()
        specs = [parse_rule_line(line, n) for n, line in enumerate(lines, start=1)]
        return [spec for spec in specs if spec is not None]

    def clean_limits(self) -> list[LimitSpec]:
        lines = self.cleaned_data["limits"].splitlines()
        specs = [parse_limit_line(line, n) for n, line in enumerate(lines, start=1)]
        return [spec for spec in specs if spec is not None]


def rule_line(rule: ApprovalRule) -> str:
    return rule_spec_line(rule.spec())


def rule_spec_line(spec: RuleSpec) -> str:
    """A rule as the policy page writes it (the inverse of its parser)."""
    approvers = (
        ">".join(f"{step.role or 'approver'}:{step.count}" for step in spec.chain)
        if spec.chain
        else str(spec.required_approvals)
    )
    words = [
        str(spec.min_amount),
        spec.currency or "*",
        spec.rail or "*",
        spec.mode or "*",
        approvers,
    ]
    if spec.country:
        words.append(f"country={spec.country}")
    if spec.channel:
        words.append(f"channel={spec.channel}")
    if spec.maker_ids:
        words.append("makers=" + ",".join(str(pk) for pk in sorted(spec.maker_ids)))
    if spec.maker_roles:
        words.append("maker_roles=" + ",".join(sorted(spec.maker_roles)))
    if spec.recipient_younger_than_days is not None:
        words.append(f"recipient_under_days={spec.recipient_younger_than_days}")
    return " ".join(words)


def limit_line(limit: LimitSpec) -> str:
    window = "day" if limit.days == 0 else f"{limit.days}d"
    return f"{limit.subject} {window} {limit.amount} {limit.currency}"
