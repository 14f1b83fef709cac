"""The pure approval decisions, table-driven: chains and their order, conditions, limits."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal as D

import pytest

from payouts.approval.rules import (
    ApprovalFacts,
    ChainStep,
    LimitSpec,
    PayoutFacts,
    Refusal,
    RuleSpec,
    approval_chain,
    approval_decide,
    limit_breach,
)

FA = "finance_approver"
APPROVER_THEN_ADMIN = (ChainStep(FA, 1), ChainStep("admin", 1))


def facts(**values: object) -> PayoutFacts:
    base: dict[str, object] = {"amount": D("100"), "currency": "USD", "rail": "WIRE"}
    base.update(values)
    return PayoutFacts(**base)  # type: ignore[arg-type]


BIG_CHAIN = RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN)


@pytest.mark.parametrize(
    ("rules", "payout", "expected"),
    [
        # No rule matches: the default, one step of any approvers.
        ([BIG_CHAIN], facts(), (ChainStep("", 1),)),
        ([BIG_CHAIN], facts(amount=D("10000")), APPROVER_THEN_ADMIN),
        # Channel: only API-made payouts.
        (
            [RuleSpec(required_approvals=2, channel="api")],
            facts(channel="page"),
            (ChainStep("", 1),),
        ),
        (
            [RuleSpec(required_approvals=2, channel="api")],
            facts(channel="api"),
            (ChainStep("", 2),),
        ),
        # Maker by role, or by person.
        (
            [RuleSpec(required_approvals=3, maker_roles=frozenset({"compliance"}))],
            facts(maker_roles=frozenset({"finance_maker"})),
            (ChainStep("", 1),),
        ),
        (
            [RuleSpec(required_approvals=3, maker_roles=frozenset({"compliance"}))],
            facts(maker_roles=frozenset({"compliance", "finance_maker"})),
            (ChainStep("", 3),),
        ),
        (
            [RuleSpec(required_approvals=2, maker_ids=frozenset({7}))],
            facts(maker_id=7),
            (ChainStep("", 2),),
        ),
        (
            [RuleSpec(required_approvals=2, maker_ids=frozenset({7}))],
            facts(maker_id=8),
            (ChainStep("", 1),),
        ),
        # Corridor: the recipient's country.
        ([RuleSpec(required_approvals=2, country="MX")], facts(country="mx"), (ChainStep("", 2),)),
        ([RuleSpec(required_approvals=2, country="MX")], facts(country="US"), (ChainStep("", 1),)),
        # Recipient's age: under N days is stricter; unknown age never matches.
        (
            [RuleSpec(required_approvals=2, recipient_younger_than_days=30)],
            facts(recipient_age_days=29),
            (ChainStep("", 2),),
        ),
        (
            [RuleSpec(required_approvals=2, recipient_younger_than_days=30)],
            facts(recipient_age_days=30),
            (ChainStep("", 1),),
        ),
        # The most demanding wins: more people beats more steps, then more steps wins a tie.
        (
            [BIG_CHAIN, RuleSpec(required_approvals=3)],
            facts(amount=D("20000")),
            (ChainStep("", 3),),
        ),
        (
            [RuleSpec(required_approvals=2), BIG_CHAIN],
            facts(amount=D("20000")),
            APPROVER_THEN_ADMIN,
        ),
        # All conditions of a rule must hold.
        (
            [RuleSpec(required_approvals=2, channel="api", country="MX")],
            facts(channel="api", country="US"),
            (ChainStep("", 1),),
        ),
    ],
)
def test_the_chain_a_payout_needs(
    rules: list[RuleSpec], payout: PayoutFacts, expected: tuple[ChainStep, ...]
) -> None:
    assert approval_chain(rules, default=1, facts=payout) == expected


def chained(*approvals: tuple[int, int]) -> ApprovalFacts:
    return ApprovalFacts(
        pending=True,
        maker_id=1,
        recipient_creator_id=2,
        approver_ids=[who for who, _ in approvals],
        required=2,
        chain=APPROVER_THEN_ADMIN,
        approval_steps=[step for _, step in approvals],
    )


def withdrawn(who: int) -> ApprovalFacts:
    return ApprovalFacts(
        pending=True,
        maker_id=1,
        recipient_creator_id=2,
        approver_ids=[],
        required=2,
        chain=APPROVER_THEN_ADMIN,
        withdrawn_ids=[who],
    )


@pytest.mark.parametrize(
    ("state", "approver", "permission", "roles", "allowed", "refusal", "complete"),
    [
        # Step 1 first: an admin cannot jump ahead of the finance approver.
        (chained(), 10, False, {"admin"}, False, Refusal.NOT_YOUR_STEP, False),
        (chained(), 11, True, {FA}, True, None, False),
        # Step 2: the approver role no longer fits, the admin completes the chain.
        (chained((11, 0)), 12, True, {FA}, False, Refusal.NOT_YOUR_STEP, False),
        (chained((11, 0)), 10, False, {"admin"}, True, None, True),
        # A withdrawn step-1 approval: step 2's approval stays, step 1 is current again.
        (chained((10, 1)), 11, True, {FA}, True, None, True),
        (chained((10, 1)), 13, False, {"admin"}, False, Refusal.NOT_YOUR_STEP, False),
        # One person counts once, whatever roles they hold for the next step.
        (chained((14, 0)), 14, True, {FA, "admin"}, False, Refusal.ALREADY_APPROVED, False),
        # Holding no role of the chain and no approver permission.
        (chained(), 15, False, {"compliance"}, False, Refusal.NOT_PERMITTED, False),
        # The maker, even holding the roles.
        (chained((11, 0)), 1, True, {"admin"}, False, Refusal.MAKER, False),
        (chained((11, 0), (10, 1)), 16, True, {FA, "admin"}, False, Refusal.COMPLETE, False),
        # Who withdrew in this round has had their say.
        (withdrawn(17), 17, True, {FA}, False, Refusal.WITHDRAWN, False),
        (withdrawn(17), 18, True, {FA}, True, None, False),
    ],
)
def test_chain_decision(
    state: ApprovalFacts,
    approver: int,
    permission: bool,
    roles: set[str],
    allowed: bool,
    refusal: Refusal | None,
    complete: bool,
) -> None:
    decision = approval_decide(
        state, approver_id=approver, has_permission=permission, roles=frozenset(roles)
    )
    assert (decision.allowed, decision.refusal, decision.complete) == (allowed, refusal, complete)


def test_the_refusal_names_the_step_waited_for() -> None:
    decision = approval_decide(
        chained(), approver_id=10, has_permission=False, roles=frozenset({"admin"})
    )
    assert "step 1" in decision.message and "1 finance_approver" in decision.message


MAKER_DAY = LimitSpec(subject="maker", amount=D("1000.00"), currency="USD", days=0)
RECIPIENT_WEEK = LimitSpec(subject="recipient", amount=D("5000.00"), currency="USD", days=7)


@pytest.mark.parametrize(
    ("amount", "currency", "used", "breached", "left"),
    [
        (D("1000.00"), "USD", {}, None, None),  # exactly the limit is within
        (D("1000.01"), "USD", {}, MAKER_DAY, D("1000.00")),
        (D("0.01"), "USD", {0: D("1000.00")}, MAKER_DAY, D("0")),
        (D("300.02"), "USD", {0: D("699.99")}, MAKER_DAY, D("300.01")),
        (D("500.00"), "USD", {0: D("0"), 1: D("4600.00")}, RECIPIENT_WEEK, D("400.00")),
        # Another currency: never converted, never counted.
        (D("99999.00"), "EUR", {0: D("1000.00")}, None, None),
        # Decimal exactness: 0.1 + 0.2 is 0.3 here.
        (D("0.30"), "USD", {0: D("999.70")}, None, None),
    ],
)
def test_limits(
    amount: D, currency: str, used: dict[int, D], breached: LimitSpec | None, left: D | None
) -> None:
    breach = limit_breach([MAKER_DAY, RECIPIENT_WEEK], amount=amount, currency=currency, used=used)
    if breached is None:
        assert breach is None
    else:
        assert breach is not None and breach.limit == breached and breach.left == left
        assert breached.label() in breach.message and f"{left} USD is left" in breach.message


def test_the_window_a_limit_counts() -> None:
    now = datetime(2026, 11, 26, 15, 30, tzinfo=UTC)
    assert MAKER_DAY.window_start(now) == datetime(2026, 11, 26, tzinfo=UTC)
    assert RECIPIENT_WEEK.window_start(now) == datetime(2026, 11, 19, 15, 30, tzinfo=UTC)
