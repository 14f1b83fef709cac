"""The pure maker-checker decisions: required approvals and segregation of duties."""

from __future__ import annotations

from decimal import Decimal

from payouts.approval.rules import (
    ApprovalFacts,
    Refusal,
    RuleSpec,
    approval_decide,
    approvals_kept_after_requote,
    approvals_required,
)

TWO_ABOVE_10K = [RuleSpec(required_approvals=2, min_amount=Decimal("10000"), currency="USD")]


def required(amount: str, rules: list[RuleSpec] = TWO_ABOVE_10K, **kw: str) -> int:
    facts = {"currency": "USD", "rail": "SPEI", "mode": "fiat", **kw}
    return approvals_required(rules, default=1, amount=Decimal(amount), **facts)


def test_default_is_one_approver_below_the_threshold() -> None:
    assert required("9999.99") == 1


def test_two_approvers_at_or_above_10000_usd() -> None:
    assert required("10000.00") == 2
    assert required("250000") == 2


def test_rule_for_another_currency_rail_or_mode_does_not_apply() -> None:
    rules = [
        RuleSpec(required_approvals=3, currency="EUR"),
        RuleSpec(required_approvals=3, rail="SWIFT"),
        RuleSpec(required_approvals=3, mode="crypto"),
    ]
    assert required("50", rules) == 1
    assert required("50", rules, rail="swift") == 3
    assert required("50", rules, mode="crypto") == 3


def test_strictest_matching_rule_wins_whatever_the_order() -> None:
    rules = [RuleSpec(required_approvals=3, rail="SWIFT"), *TWO_ABOVE_10K]
    assert required("20000", rules, rail="SWIFT") == 3
    assert required("20000", list(reversed(rules)), rail="SWIFT") == 3


def test_a_rule_can_never_ask_for_fewer_than_the_default_or_one() -> None:
    assert (
        approvals_required(
            [RuleSpec(required_approvals=0)],
            default=2,
            amount=Decimal("1"),
            currency="USD",
            rail="ACH",
            mode="fiat",
        )
        == 2
    )


def facts(**overrides: object) -> ApprovalFacts:
    values: dict[str, object] = {
        "pending": True,
        "maker_id": 1,
        "recipient_creator_id": 2,
        "approver_ids": [],
        "required": 1,
    }
    values.update(overrides)
    return ApprovalFacts(**values)  # type: ignore[arg-type]


def test_maker_cannot_approve_own_payout_even_with_the_approver_permission() -> None:
    decision = approval_decide(facts(), approver_id=1, has_permission=True)
    assert not decision.allowed and decision.refusal is Refusal.MAKER


def test_recipient_creator_cannot_approve_payouts_to_it() -> None:
    decision = approval_decide(facts(), approver_id=2, has_permission=True)
    assert not decision.allowed and decision.refusal is Refusal.RECIPIENT_CREATOR


def test_no_person_counts_twice() -> None:
    decision = approval_decide(
        facts(required=2, approver_ids=[3]), approver_id=3, has_permission=True
    )
    assert not decision.allowed and decision.refusal is Refusal.ALREADY_APPROVED


def test_without_the_permission_nobody_approves() -> None:
    decision = approval_decide(facts(), approver_id=3, has_permission=False)
    assert decision.refusal is Refusal.NOT_PERMITTED


def test_only_a_pending_payout_is_approved() -> None:
    decision = approval_decide(facts(pending=False), approver_id=3, has_permission=True)
    assert decision.refusal is Refusal.NOT_PENDING


def test_two_approver_rule_completes_on_the_second_distinct_person() -> None:
    first = approval_decide(facts(required=2), approver_id=3, has_permission=True)
    assert first.allowed and not first.complete and first.count_after == 1
    second = approval_decide(
        facts(required=2, approver_ids=[3]), approver_id=4, has_permission=True
    )
    assert second.allowed and second.complete and second.count_after == 2


def test_no_approval_beyond_the_required_number() -> None:
    decision = approval_decide(facts(approver_ids=[3]), approver_id=4, has_permission=True)
    assert decision.refusal is Refusal.COMPLETE


def test_requote_within_tolerance_keeps_approvals_and_outside_restarts() -> None:
    tolerance = Decimal("0.01")
    approved = Decimal("100000.00")
    assert approvals_kept_after_requote(
        approved=approved, requoted=Decimal("100900.00"), tolerance=tolerance
    )
    assert approvals_kept_after_requote(
        approved=approved, requoted=Decimal("99000.00"), tolerance=tolerance
    )
    assert not approvals_kept_after_requote(
        approved=approved, requoted=Decimal("101000.01"), tolerance=tolerance
    )
