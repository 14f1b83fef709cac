"""The quote arithmetic check against interface.md 4.2's fee rules, worked by hand."""

from __future__ import annotations

from decimal import Decimal as D

from quotes.arithmetic import QuoteFigures, recompute
from tests.finance import MXN_1000


def test_forward_quote_agrees_with_the_fee_rules() -> None:
    # fees = 1.00 + 1000 x 0.005 = 6.00; service = 17.25 x (1 - 0.003) = 17.19825;
    # recipient = (1000 - 6) x 17.19825 = 17095.0605 -> 17095.06
    result = recompute(MXN_1000)
    assert result.total_fees == D("6.00")
    assert result.service_rate == D("17.198250")
    assert result.amount_after_fees == D("994.00")
    assert result.quote_amount == D("17095.06")
    assert result.agrees and not result.unchecked


def test_penalty_markup_and_client_markup_and_network_fee_all_count() -> None:
    figures = QuoteFigures(
        base_amount=D("200.00"),
        quote_amount=D("3438.22"),
        rate=D("17.25"),
        service_rate=D("17.163750"),
        base_fixed_fee=D("1.00"),
        base_percentage_fee=D("0.005"),
        base_fx_markup=D("0.003"),
        client_fixed_fee=D("0.25"),
        client_percentage_fee=D("0.001"),
        client_fx_markup=D("0"),
        network_fee=D("0.50"),
        penalty_markup=D("0.002"),
        total_fees=D("2.95"),
    )
    # fixed = 1.00 + 0.25 + 0.50 = 1.75; pct = 0.006 -> fees 1.75 + 1.20 = 2.95
    # service = 17.25 x 0.995 = 17.16375; recipient = 197.05 x 17.16375 = 3382.1169... -> 3382.12
    result = recompute(figures)
    assert result.total_fees == D("2.95")
    assert result.quote_amount == D("3382.12")
    assert [c.name for c in result.disagreements] == ["quote_amount"]
    assert result.disagreements[0].difference == D("56.10")


def test_a_disagreement_of_more_than_a_cent_is_flagged_and_one_cent_is_not() -> None:
    off_by_one = recompute(QuoteFigures(**{**MXN_1000.__dict__, "total_fees": D("6.01")}))
    assert off_by_one.agrees  # within a cent: rounding, not a disagreement
    off_by_two = recompute(QuoteFigures(**{**MXN_1000.__dict__, "total_fees": D("6.02")}))
    assert [c.name for c in off_by_two.disagreements] == ["total_fees"]


def test_a_wrong_service_rate_is_flagged() -> None:
    result = recompute(QuoteFigures(**{**MXN_1000.__dict__, "service_rate": D("17.25")}))
    assert "service_rate" in [c.name for c in result.disagreements]


def test_amount_in_destination_allows_the_rounded_up_cent_of_the_source() -> None:
    # Asked: 17095.06 MXN. Solved base 1000.00 gives exactly that; a base one cent higher
    # (rounded up) gives 17095.23, which the rules allow for the destination mode only.
    figures = QuoteFigures(
        **{**MXN_1000.__dict__, "amount_in_destination": True, "base_amount": D("1000.01")}
    )
    assert recompute(figures).agrees
    forward = QuoteFigures(**{**figures.__dict__, "amount_in_destination": False})
    assert not recompute(forward).agrees


def test_a_partial_breakdown_checks_what_it_can() -> None:
    figures = QuoteFigures(
        base_amount=D("1000.00"),
        quote_amount=D("17095.06"),
        rate=D("17.25"),
        service_rate=D("17.198250"),
        total_fees=D("6.00"),
    )
    result = recompute(figures)
    assert result.unchecked == ("total_fees", "service_rate")
    assert [c.name for c in result.checks] == ["quote_amount"]
    assert result.agrees


# USDC -> COP on PSE (solana), 2,000,000.00 COP to arrive, as the emulator prices it by day:
# service = 3950 x (1 - 0.004) = 3934.2; base solved = ceil_cent((2e6 / 3934.2 + 2.00) / 0.994)
# = 513.45; fees = 2.00 + 513.45 x 0.006 = 5.08; forward = 508.37 x 3934.2 = 2,000,029.25.
COP_TO_ARRIVE = QuoteFigures(
    base_amount=D("513.45"),
    quote_amount=D("2000000.00"),
    rate=D("3950.000000"),
    service_rate=D("3934.200000"),
    amount_in_destination=True,
    base_fixed_fee=D("1.50"),
    base_percentage_fee=D("0.006"),
    base_fx_markup=D("0.004"),
    client_fixed_fee=D("0"),
    client_percentage_fee=D("0"),
    client_fx_markup=D("0"),
    network_fee=D("0.50"),
    penalty_markup=D("0"),
    total_fees=D("5.08"),
    base_currency="USDC",
    quote_currency="COP",
)


def test_a_difference_within_the_tolerance_is_named_and_explained() -> None:
    result = recompute(COP_TO_ARRIVE)
    assert result.agrees and not result.exact
    [amount] = result.explained
    assert (amount.name, amount.difference, amount.currency) == (
        "quote_amount",
        D("-29.25"),
        "COP",
    )
    # One cent of USDC at the service rate (39.34 COP) plus a cent of rounding.
    assert amount.tolerance == D("39.35")
    assert "rounded that up to the cent" in amount.why
    fees = next(check for check in result.checks if check.name == "total_fees")
    assert fees.exact and fees.currency == "USDC"


def test_exact_figures_need_no_explanation() -> None:
    result = recompute(MXN_1000)
    assert result.exact and result.explained == ()
    off_by_one = recompute(QuoteFigures(**{**MXN_1000.__dict__, "total_fees": D("6.01")}))
    assert not off_by_one.exact and [c.name for c in off_by_one.explained] == ["total_fees"]
