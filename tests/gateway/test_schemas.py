"""The typed edge: both casings, both timestamp formats, money as string or number, extras kept."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from pydantic import ValidationError

from gateway.schemas import Payout, PayoutCreated, PayoutStatus, Quote, User


def _quote(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "quote_id": "7c2b8c1e-0000-4000-8000-000000000001",
        "base_amount": 100,
        "base_currency": "USD",
        "quote_amount": "1712.35",
        "quote_currency": "MXN",
        "account_type": "SPEI",
        "rate": 17.5,
        "service_rate": "17.465",
        "expiration_ts": "2026-11-21T10:15:30.123Z",
        "status": "ACTIVE",
        "fees": {"total_fees": 2.05, "base_fees": {"fixed_fee": "1.00"}},
    }
    data.update(overrides)
    return data


def test_money_from_number_and_string_is_exact_decimal() -> None:
    quote = Quote.model_validate(_quote(base_amount=0.1, quote_amount="1712.35"))
    assert quote.base_amount == Decimal("0.1")
    assert quote.quote_amount == Decimal("1712.35")
    assert quote.fees is not None and quote.fees.total_fees == Decimal("2.05")
    assert quote.fees.base_fees is not None
    assert quote.fees.base_fees.fixed_fee == Decimal("1.00")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-11-21T10:15:30.123Z", datetime(2026, 11, 21, 10, 15, 30, 123000, tzinfo=UTC)),
        ("2026-05-28 00:52:49.879228+00", datetime(2026, 5, 28, 0, 52, 49, 879228, tzinfo=UTC)),
    ],
)
def test_both_timestamp_formats(raw: str, expected: datetime) -> None:
    assert Quote.model_validate(_quote(expiration_ts=raw)).expiration_ts == expected


def test_payout_status_both_casings_one_enum() -> None:
    created = PayoutCreated.model_validate(
        {"id": "p1", "status": "created", "amount": "10.00", "currency": "USD"}
    )
    record = Payout.model_validate({"payout_id": "p1", "status": "CREATED"})
    assert created.status is PayoutStatus.CREATED is record.status
    assert Payout.model_validate({"payout_id": "p", "status": "in_review"}).status is (
        PayoutStatus.IN_REVIEW
    )


def test_unknown_fields_are_kept_not_fatal() -> None:
    user = User.model_validate(
        {
            "user_id": "u1",
            "status": "verified",
            "eligible_products": [{"product_id": "x", "eligible": True, "missing_fields": []}],
        }
    )
    assert user.model_extra == {
        "eligible_products": [{"product_id": "x", "eligible": True, "missing_fields": []}]
    }


def test_unknown_status_and_bad_money_are_refused() -> None:
    with pytest.raises(ValidationError):
        Payout.model_validate({"payout_id": "p", "status": "TELEPORTED"})
    with pytest.raises(ValidationError):
        Quote.model_validate(_quote(base_amount="ten dollars"))
    with pytest.raises(ValidationError):
        Quote.model_validate(_quote(base_amount=True))


def test_payout_record_with_events() -> None:
    payout = Payout.model_validate(
        {
            "payout_id": "p1",
            "status": "COMPLETED",
            "from_amount": "100.00",
            "fee": 1.5,
            "events": [
                {"status": "PENDING", "at": "2026-11-21T10:15:30.123Z"},
                {"status": "completed", "at": "2026-05-28 00:52:49.879228+00"},
            ],
        }
    )
    assert [e.status for e in payout.events] == [PayoutStatus.PENDING, PayoutStatus.COMPLETED]
    assert payout.fee == Decimal("1.5")
