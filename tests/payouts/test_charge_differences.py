"""The pure comparison of what the approvers were shown with what the upstream charged."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal as D

from payouts.drafts.pricing import Figures, charge_differences

SHOWN = Figures(
    amount=D("539.00"),
    currency="USD",
    total_fees=D("15.74"),
    network_fee=D("0.20"),
    recipient_amount=D("539.00"),
    recipient_currency="USD",
    total=D("554.74"),
    total_currency="USDC",
)


def figures(differences: list[dict[str, str | None]]) -> list[str | None]:
    return [d["figure"] for d in differences]


def test_the_same_figures_make_no_difference() -> None:
    assert charge_differences(SHOWN, replace(SHOWN)) == []


def test_a_network_fee_charged_but_never_shown_is_flagged_with_what_it_changed() -> None:
    # The reported case: 539.00 previewed at 15.54 fees, charged 15.74 and a 554.74 deposit.
    shown = replace(SHOWN, total_fees=D("15.54"), network_fee=None, total=D("554.54"))
    differences = charge_differences(shown, SHOWN)
    assert figures(differences) == ["total_fees", "network_fee", "total"]
    network = differences[1]
    assert (network["shown"], network["charged"]) == ("0.00", "0.20")
    assert differences[2] == {
        "figure": "total",
        "label": "Total (debit, or deposit to send)",
        "shown": "554.54",
        "shown_currency": "USDC",
        "charged": "554.74",
        "charged_currency": "USDC",
    }


def test_a_recipient_amount_never_shown_promises_nothing_but_a_shown_one_is_held() -> None:
    unshown = replace(SHOWN, recipient_amount=None, recipient_currency="")
    assert charge_differences(unshown, replace(SHOWN, recipient_amount=D("537.92"))) == []
    held = charge_differences(SHOWN, replace(SHOWN, recipient_amount=D("537.92")))
    assert figures(held) == ["recipient_amount"]
    assert (held[0]["shown"], held[0]["charged"]) == ("539.00", "537.92")


def test_a_deposit_in_another_stablecoin_differs_even_for_the_same_number() -> None:
    differences = charge_differences(SHOWN, replace(SHOWN, total_currency="USDT"))
    assert figures(differences) == ["total"]
    assert differences[0]["charged_currency"] == "USDT"


def test_a_figure_the_upstream_did_not_state_cannot_be_taken_as_agreed() -> None:
    differences = charge_differences(SHOWN, replace(SHOWN, total=None))
    assert figures(differences) == ["total"] and differences[0]["charged"] is None


def test_fees_charged_on_a_payout_never_previewed_are_flagged() -> None:
    never = replace(SHOWN, total_fees=None, network_fee=None, total=None)
    assert figures(charge_differences(never, SHOWN)) == ["total_fees", "network_fee", "total"]


def test_fiat_without_network_fee_on_either_side_agrees() -> None:
    fiat = replace(SHOWN, network_fee=None, total_fees=D("15.54"), total=D("554.54"))
    fiat = replace(fiat, total_currency="USD")
    assert charge_differences(fiat, replace(fiat)) == []
    assert figures(charge_differences(fiat, replace(fiat, amount=D("540.00")))) == ["amount"]
