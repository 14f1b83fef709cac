"""
The pure comparison of PayOps's records with the upstream's: explicit inputs, a list of findings.

No database, no network (like gateway/limiter/policy.py `decide`): the services read both sides,
this module says what differs and by how much, tests/books/test_reconciliation_matching.py pins
every case.

A payout is compared on what both sides hold (decisions.md 2 "Get payout"): its status (the
upstream's word; PayOps's RETURNED is the upstream's FAILED after COMPLETED, decisions.md 3), its
amount (`from_amount`), its fee (`fee`, the whole of it) and its rate (`to_amount / from_amount`:
a different recipient amount for the same amount is a different rate). A balance is compared to
the cent: the ledger's roll-forward closing against the upstream's `available_balance`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

CENTS = Decimal("0.01")
RATE_PLACES = Decimal("0.000001")

MISSING_UPSTREAM = "missing_upstream"
MISSING_IN_PAYOPS = "missing_in_payops"
STATUS_DIFFERS = "status_differs"
AMOUNT_DIFFERS = "amount_differs"
FEE_DIFFERS = "fee_differs"
RATE_DIFFERS = "rate_differs"
BALANCE_DIFFERS = "balance_differs"

# PayOps's status -> the upstream's word for it.
_UPSTREAM_WORD = {"returned": "FAILED"}


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENTS, rounding=ROUND_HALF_UP)


def rate_of(from_amount: Decimal | None, to_amount: Decimal | None) -> Decimal | None:
    """to / from of the amounts in cents (what both sides state), to six places."""
    if from_amount is None or to_amount is None or not cents(from_amount):
        return None
    return (cents(to_amount) / cents(from_amount)).quantize(RATE_PLACES, rounding=ROUND_HALF_UP)


def upstream_word(status: str) -> str:
    return _UPSTREAM_WORD.get(status.lower(), status.upper())


@dataclass(frozen=True)
class Side:
    """One payout as one side holds it. `amount`/`fee`/`to_amount` None: that side does not say."""

    upstream_id: str
    status: str  # the upstream's word (UPPERCASE)
    amount: Decimal | None
    fee: Decimal | None
    to_amount: Decimal | None
    currency: str = "USD"
    to_currency: str = ""

    @property
    def rate(self) -> Decimal | None:
        return rate_of(self.amount, self.to_amount)

    def as_json(self) -> dict[str, Any]:
        return {
            "upstream_id": self.upstream_id,
            "status": self.status,
            "amount": _text(self.amount),
            "fee": _text(self.fee),
            "to_amount": _text(self.to_amount),
            "rate": _text(self.rate),
            "currency": self.currency,
            "to_currency": self.to_currency,
        }


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Finding:
    """One named mismatch. `key` is what it concerns (an upstream payout id, or "va:<pk>")."""

    kind: str
    key: str
    summary: str
    ours: dict[str, Any] = field(default_factory=dict)
    theirs: dict[str, Any] = field(default_factory=dict)
    difference: Decimal | None = None


def compare_payout(ours: Side, theirs: Side) -> list[Finding]:
    """Each way the two records of one payout differ (none: they agree)."""
    key = theirs.upstream_id
    mine, yours = ours.as_json(), theirs.as_json()
    found: list[Finding] = []
    if ours.status != theirs.status:
        found.append(
            Finding(
                STATUS_DIFFERS,
                key,
                f"Status is {theirs.status} upstream, {ours.status} in PayOps",
                ours=mine,
                theirs=yours,
            )
        )
    if (
        ours.amount is not None
        and theirs.amount is not None
        and cents(ours.amount) != cents(theirs.amount)
    ):
        diff = cents(theirs.amount) - cents(ours.amount)
        found.append(
            Finding(
                AMOUNT_DIFFERS,
                key,
                f"Amount is {cents(theirs.amount)} upstream, {cents(ours.amount)} in PayOps",
                difference=diff,
                ours=mine,
                theirs=yours,
            )
        )
    if ours.fee is not None and theirs.fee is not None and cents(ours.fee) != cents(theirs.fee):
        diff = cents(theirs.fee) - cents(ours.fee)
        found.append(
            Finding(
                FEE_DIFFERS,
                key,
                f"Fee is {cents(theirs.fee)} upstream, {cents(ours.fee)} in PayOps",
                difference=diff,
                ours=mine,
                theirs=yours,
            )
        )
    our_rate, their_rate = ours.rate, theirs.rate
    if our_rate is not None and their_rate is not None and our_rate != their_rate:
        found.append(
            Finding(
                RATE_DIFFERS,
                key,
                f"Rate is {their_rate} upstream, {our_rate} in PayOps",
                difference=their_rate - our_rate,
                ours=mine,
                theirs=yours,
            )
        )
    return found


def match_payouts(
    ours: Mapping[str, Side], theirs: Iterable[Side]
) -> tuple[list[Finding], set[str]]:
    """Compare one page of the upstream's payouts with ours (by upstream id): the findings, and
    the ids compared (every one on the page: an id without a finding agrees)."""
    found: list[Finding] = []
    seen: set[str] = set()
    for their in theirs:
        seen.add(their.upstream_id)
        our = ours.get(their.upstream_id)
        if our is None:
            found.append(
                Finding(
                    MISSING_IN_PAYOPS,
                    their.upstream_id,
                    f"Upstream payout {their.upstream_id} ({their.status}, "
                    f"{_text(their.amount)} {their.currency}) is not in PayOps",
                    theirs=their.as_json(),
                    difference=their.amount,
                )
            )
        else:
            found.extend(compare_payout(our, their))
    return found, seen


def missing_upstream(ours: Side) -> Finding:
    """PayOps holds a payout with an upstream id the upstream does not know (404)."""
    return Finding(
        MISSING_UPSTREAM,
        ours.upstream_id,
        f"PayOps payout {ours.upstream_id} ({ours.status}) is not known upstream",
        ours=ours.as_json(),
        difference=None if ours.amount is None else -ours.amount,
    )


def compare_balance(
    *, key: str, currency: str, ledger: Mapping[str, Decimal], upstream_balance: Decimal
) -> list[Finding]:
    """The roll-forward's closing (opening + deposits - payouts - fees + reversals +
    adjustments) against the upstream's balance; a finding names the amount it is off by."""
    closing = cents(ledger["closing"])
    theirs = cents(upstream_balance)
    if closing == theirs:
        return []
    diff = theirs - closing
    return [
        Finding(
            BALANCE_DIFFERS,
            key,
            f"Balance is {theirs} {currency} upstream, {closing} {currency} by PayOps's ledger "
            f"(off by {diff:+})",
            ours={name: str(cents(value)) for name, value in ledger.items()},
            theirs={"available_balance": str(theirs), "currency": currency},
            difference=diff,
        )
    ]
