"""Quote arithmetic checked against figures computed by hand (decisions.md "Quote arithmetic")."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.test import override_settings

from emulator.domain.pricing import ClientMarkup, is_off_hours, price
from emulator.errors import EmulatorError

# Tuesday 24 November 2026, 12:00 in New York (EST, UTC-5): business hours.
TUESDAY_NOON_NY = datetime(2026, 11, 24, 17, 0, tzinfo=UTC)
# Monday 23 November 2026, 21:00 in New York: evening, penalty applies.
MONDAY_EVENING_NY = datetime(2026, 11, 24, 2, 0, tzinfo=UTC)
# Saturday 28 November 2026, 12:00 in New York: weekend, penalty applies.
SATURDAY_NOON_NY = datetime(2026, 11, 28, 17, 0, tzinfo=UTC)


def mxn(amount: str, at: datetime = TUESDAY_NOON_NY, destination: bool = False, **kw):
    return price(
        base_currency="USD",
        quote_currency="MXN",
        account_type="SPEI",
        network=None,
        amount=Decimal(amount),
        amount_in_destination=destination,
        at=at,
        **kw,
    )


def test_business_hours_usd_to_mxn_by_hand():
    # rate 17.25, SPEI: fixed 1.00, 0.5 %, fx markup 0.3 %.
    # service_rate = 17.25 x (1 - 0.003) = 17.198250
    # total_fees = 1.00 + 100 x 0.005 = 1.50; quote = 98.50 x 17.19825 = 1694.027625 -> 1694.03
    p = mxn("100")
    assert p.rate == Decimal("17.250000")
    assert p.service_rate == Decimal("17.198250")
    assert p.penalty_markup == Decimal("0")
    assert p.total_fees == Decimal("1.50")
    assert p.base_amount == Decimal("100.00")
    assert p.quote_amount == Decimal("1694.03")


def test_off_hours_penalty_reduces_the_service_rate():
    # service_rate = 17.25 x (1 - 0.003 - 0.002) = 17.163750; 98.50 x 17.16375 = 1690.629375
    for at in (MONDAY_EVENING_NY, SATURDAY_NOON_NY):
        p = mxn("100", at=at)
        assert p.penalty_markup == Decimal("0.002")
        assert p.service_rate == Decimal("17.163750")
        assert p.quote_amount == Decimal("1690.63")


@override_settings(EMULATOR_PENALTY_MARKUP="0.01")
def test_penalty_markup_is_a_setting():
    p = mxn("100", at=MONDAY_EVENING_NY)
    assert p.penalty_markup == Decimal("0.01")
    assert p.service_rate == Decimal("17.025750")  # 17.25 x 0.987


def test_off_hours_boundaries_in_new_york_time():
    assert not is_off_hours(datetime(2026, 11, 24, 13, 0, tzinfo=UTC))  # 08:00 EST
    assert is_off_hours(datetime(2026, 11, 24, 12, 59, tzinfo=UTC))  # 07:59 EST
    assert is_off_hours(datetime(2026, 11, 24, 23, 0, tzinfo=UTC))  # 18:00 EST
    assert not is_off_hours(datetime(2026, 11, 24, 22, 59, tzinfo=UTC))  # 17:59 EST
    # Summer time: 12:00 UTC on a July Wednesday is 08:00 EDT.
    assert not is_off_hours(datetime(2026, 7, 15, 12, 0, tzinfo=UTC))


def test_stablecoin_with_network_fee_and_client_markup_by_hand():
    # USDT on tron to a US wire: fixed 15.00 + client 2.50 + network 1.00 = 18.50;
    # percentage 0.001 + 0.0025 = 0.0035 -> fees = 18.50 + 3.50 = 22.00;
    # service_rate = 1 x (1 - 0 - 0.001) = 0.999; quote = 978 x 0.999 = 977.022 -> 977.02
    p = price(
        base_currency="USDT",
        quote_currency="USD",
        account_type="WIRE",
        network="tron",
        amount=Decimal("1000"),
        amount_in_destination=False,
        at=TUESDAY_NOON_NY,
        client_markup=ClientMarkup(Decimal("2.50"), Decimal("0.0025"), Decimal("0.001")),
    )
    assert p.network_fee == Decimal("1.00")
    assert p.total_fees == Decimal("22.00")
    assert p.service_rate == Decimal("0.999000")
    assert p.quote_amount == Decimal("977.02")
    assert p.client_fixed_fee == Decimal("2.50")


def test_amount_in_destination_rounds_the_base_amount_up():
    # 1000 MXN: (1000 / 17.19825 + 1.00) / 0.995 = 59.4426... -> 59.45 (59.44 would give 999.91)
    p = mxn("1000", destination=True)
    assert p.base_amount == Decimal("59.45")
    assert p.total_fees == Decimal("1.30")  # 1.00 + 59.45 x 0.005 = 1.29725
    assert p.quote_amount == Decimal("1000.00")
    # The recipient gets at least what was asked: 58.15 x 17.19825 = 1000.08
    assert ((p.base_amount - p.total_fees) * p.service_rate).quantize(Decimal("0.01")) >= Decimal(
        "1000"
    )


def test_fees_exceeding_the_amount_are_a_409():
    # SWIFT: 25.00 + 20 x 0.002 = 25.04 > 20
    with pytest.raises(EmulatorError) as caught:
        price(
            base_currency="USD",
            quote_currency="USD",
            account_type="SWIFT",
            network=None,
            amount=Decimal("20"),
            amount_in_destination=False,
            at=TUESDAY_NOON_NY,
        )
    assert caught.value.status == 409
    assert caught.value.body == {
        "error": {
            "code": "FEES_EXCEED_AMOUNT",
            "message": "total fees exceed the amount",
            "details": {"amount": 20.0, "total_fees": 25.04},
        }
    }


def test_destination_amount_too_small_for_the_fees():
    # 10 MXN is worth 0.58 USD, less than the 1.01 of fees; base solved: 1.59 gives 9.97 MXN,
    # so 1.60.
    with pytest.raises(EmulatorError) as caught:
        mxn("10", destination=True)
    assert caught.value.status == 400
    assert caught.value.body["error"]["code"] == "INVALID_CALCULATED_AMOUNT"
    assert caught.value.body["error"]["details"] == {
        "requested_amount": 10.0,
        "calculated_base_amount": 1.6,
    }


def test_pair_not_enabled():
    with pytest.raises(EmulatorError) as caught:
        price(
            base_currency="USDC",
            quote_currency="USDT",
            account_type="WALLET",
            network="solana",
            amount=Decimal("50"),
            amount_in_destination=False,
            at=TUESDAY_NOON_NY,
        )
    assert caught.value.status == 400
    assert caught.value.body["error"] == {
        "code": "CURRENCY_PAIR_NOT_ENABLED",
        "message": "currency pair is not enabled for this account type",
        "details": {"base_currency": "USDC", "quote_currency": "USDT", "account_type": "WALLET"},
    }
