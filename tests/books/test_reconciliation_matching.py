"""The pure matcher: every way two records of a payout, or a balance, can differ (no database)."""

from __future__ import annotations

from decimal import Decimal

from books.reconciliation import matching as m


def side(uid: str = "p1", status: str = "COMPLETED", **kw: str | None) -> m.Side:
    values = {"amount": "100.00", "fee": "2.50", "to_amount": "92.00", **kw}
    return m.Side(
        upstream_id=uid,
        status=status,
        amount=None if values["amount"] is None else Decimal(values["amount"]),
        fee=None if values["fee"] is None else Decimal(values["fee"]),
        to_amount=None if values["to_amount"] is None else Decimal(values["to_amount"]),
    )


def kinds(found: list[m.Finding]) -> list[str]:
    return [f.kind for f in found]


def test_the_same_payout_on_both_sides_agrees() -> None:
    found, seen = m.match_payouts({"p1": side()}, [side()])
    assert found == [] and seen == {"p1"}


def test_an_upstream_payout_payops_does_not_hold_is_missing_in_payops() -> None:
    found, seen = m.match_payouts({}, [side("p9", amount="40.00")])
    assert kinds(found) == [m.MISSING_IN_PAYOPS]
    assert found[0].key == "p9" and found[0].difference == Decimal("40.00")
    assert found[0].theirs["amount"] == "40.00" and found[0].ours == {}
    assert seen == {"p9"}


def test_a_payout_the_upstream_does_not_know_is_missing_upstream() -> None:
    finding = m.missing_upstream(side("p2", status="CREATED"))
    assert finding.kind == m.MISSING_UPSTREAM and finding.key == "p2"
    assert finding.difference == Decimal("-100.00")


def test_status_amount_fee_and_rate_are_each_named() -> None:
    ours = side(status="PROCESSING")
    theirs = side(status="FAILED", amount="100.01", fee="3.00", to_amount="95.00")
    found = m.compare_payout(ours, theirs)
    assert kinds(found) == [m.STATUS_DIFFERS, m.AMOUNT_DIFFERS, m.FEE_DIFFERS, m.RATE_DIFFERS]
    by_kind = {f.kind: f for f in found}
    assert by_kind[m.AMOUNT_DIFFERS].difference == Decimal("0.01")
    assert by_kind[m.FEE_DIFFERS].difference == Decimal("0.50")
    assert by_kind[m.RATE_DIFFERS].ours["rate"] == "0.920000"
    assert by_kind[m.RATE_DIFFERS].theirs["rate"] == "0.949905"
    assert "FAILED upstream, PROCESSING in PayOps" in by_kind[m.STATUS_DIFFERS].summary


def test_a_return_is_failed_in_the_upstreams_words() -> None:
    assert m.upstream_word("returned") == "FAILED"
    assert m.upstream_word("completed") == "COMPLETED"
    assert m.compare_payout(side(status=m.upstream_word("returned")), side(status="FAILED")) == []


def test_a_side_that_does_not_say_is_not_a_difference() -> None:
    assert m.compare_payout(side(fee=None, to_amount=None), side(fee="9.99")) == []


def test_sub_cent_noise_is_not_a_difference_but_a_cent_is() -> None:
    assert m.compare_payout(side(amount="100.004"), side(amount="100.00")) == []
    assert kinds(m.compare_payout(side(amount="100.005"), side(amount="100.00"))) == [
        m.AMOUNT_DIFFERS,
        m.RATE_DIFFERS,
    ]


def test_a_balance_off_by_an_amount_names_it() -> None:
    ledger = {"opening": Decimal("0"), "deposits": Decimal("1000"), "closing": Decimal("1000")}
    assert (
        m.compare_balance(
            key="va:1", currency="USD", ledger=ledger, upstream_balance=Decimal("1000.00")
        )
        == []
    )
    found = m.compare_balance(
        key="va:1", currency="USD", ledger=ledger, upstream_balance=Decimal("987.66")
    )
    assert kinds(found) == [m.BALANCE_DIFFERS]
    assert found[0].difference == Decimal("-12.34")
    assert "off by -12.34" in found[0].summary
    assert (
        found[0].ours["closing"] == "1000.00" and found[0].theirs["available_balance"] == "987.66"
    )
