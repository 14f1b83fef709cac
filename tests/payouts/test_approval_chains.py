"""Richer approval rules in the services: ordered chains by role, conditions stamped at
submission, amount limits at submission, withdrawing an approval before release, the preview."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal as D
from typing import Any

import pytest
from django.utils import timezone

from payouts.approval.policy import PolicyInvalid, approval_policy_publish
from payouts.approval.rules import ChainStep, LimitSpec, RuleSpec
from payouts.approval.selectors import policy_impact
from payouts.approval.services import payout_approval_withdraw, payout_approve
from payouts.drafts.services import payout_send_for_approval
from payouts.errors import PayoutActionRefused, PayoutInvalid
from payouts.models import Approval, ApprovalPolicy, ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.models import AuditEntry, StaffUser
from tests.finance import make_draft, make_environment, make_recipient, make_virtual_account

S = PayoutStatus
APPROVER_THEN_ADMIN = (ChainStep("finance_approver", 1), ChainStep("admin", 1))


def publish(staff: dict[str, StaffUser], *rules: RuleSpec, **extra: object) -> ApprovalPolicy:
    return approval_policy_publish(
        by=staff["admin"],
        default_required=1,
        rules=list(rules),
        **extra,  # type: ignore[arg-type]
    )


def draft(staff: dict[str, StaffUser], amount: str = "100.00", **fields: object) -> Payout:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    return make_draft(
        maker=staff["maker"],
        environment=environment,
        amount=amount,
        preview_recipient_amount=D(amount),
        **fields,
    )


def submit(payout: Payout) -> Payout:
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker)
    return Payout.objects.get(pk=payout.pk)


def test_a_chain_is_approved_in_order_each_step_by_its_role(staff: dict[str, StaffUser]) -> None:
    publish(staff, RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN))
    payout = submit(draft(staff, "15000.00"))
    assert payout.approvals_required == 2
    assert payout.approval_chain == [
        {"role": "finance_approver", "count": 1},
        {"role": "admin", "count": 1},
    ]
    with pytest.raises(PayoutActionRefused) as early:
        payout_approve(payout=payout, by=staff["admin"])
    assert early.value.code == "not_your_step" and "step 1" in early.value.message
    first = payout_approve(payout=payout, by=staff["approver"])
    assert not first.complete
    with pytest.raises(PayoutActionRefused) as wrong_role:
        payout_approve(payout=payout, by=staff["approver2"])
    assert wrong_role.value.code == "not_your_step" and "admin" in wrong_role.value.message
    assert payout_approve(payout=payout, by=staff["admin"]).complete
    payout.refresh_from_db()
    assert payout.status == S.APPROVED
    assert list(payout.approvals.values_list("step", flat=True)) == [0, 1]
    step_two = AuditEntry.objects.filter(action="payout.approved").latest("pk")
    assert step_two.details["step"] == 2 and step_two.details["step_label"] == "1 admin"


def test_a_small_payout_keeps_the_default_and_an_admin_may_not_approve_it(
    staff: dict[str, StaffUser],
) -> None:
    publish(staff, RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN))
    payout = submit(draft(staff, "50.00"))
    with pytest.raises(PayoutActionRefused) as refused:
        payout_approve(payout=payout, by=staff["admin"])
    assert refused.value.code == "not_permitted"
    assert payout_approve(payout=payout, by=staff["approver"]).complete


def test_waiting_payouts_keep_their_chain_when_a_new_version_is_published(
    staff: dict[str, StaffUser],
) -> None:
    payout = submit(draft(staff, "15000.00"))
    publish(staff, RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN))
    payout.refresh_from_db()
    assert payout.approvals_required == 1 and payout.approval_chain == [{"role": "", "count": 1}]
    assert payout_approve(payout=payout, by=staff["approver"]).complete


def test_the_channel_is_recorded_at_submission_and_a_rule_can_ask_more_of_it(
    staff: dict[str, StaffUser],
) -> None:
    publish(staff, RuleSpec(required_approvals=2, channel="api"))
    by_page = payout_send_for_approval(by=staff["maker"], payout=_ready(draft(staff)))
    by_api = payout_send_for_approval(
        by=staff["maker"], payout=_ready(draft(staff, "101.00")), channel="api"
    )
    assert (by_page.channel, by_page.approvals_required) == ("page", 1)
    assert (by_api.channel, by_api.approvals_required) == ("api", 2)


def test_conditions_on_maker_role_country_and_a_new_recipient(
    staff: dict[str, StaffUser],
) -> None:
    publish(
        staff,
        RuleSpec(required_approvals=2, maker_roles=frozenset({"finance_maker"}), country="MX"),
        RuleSpec(required_approvals=3, recipient_younger_than_days=30),
    )
    environment = make_environment()
    account = make_virtual_account(environment)
    old_us = make_recipient(
        environment,
        account.end_user,
        created_by=staff["approver2"],
        created_at=timezone.now() - timedelta(days=90),
    )
    old_mx = make_recipient(
        environment,
        account.end_user,
        created_by=staff["approver2"],
        country="MX",
        created_at=timezone.now() - timedelta(days=90),
    )
    fresh = make_recipient(environment, account.end_user, created_by=staff["approver2"])

    def needs(recipient: object) -> int:
        payout = make_draft(
            maker=staff["maker"],
            environment=environment,
            virtual_account=account,
            recipient=recipient,
        )
        return submit(payout).approvals_required

    assert (needs(old_us), needs(old_mx), needs(fresh)) == (1, 2, 3)


def _ready(payout: Payout) -> Payout:
    """What submission checks first: a fresh preview."""
    Payout.objects.filter(pk=payout.pk).update(
        previewed_at=timezone.now(),
        preview_total_fees=D("1.00"),
        preview_fees={"total_fees": "1.00"},
        preview_recipient_currency="USD",
    )
    payout.refresh_from_db()
    return payout


def test_a_submission_over_a_limit_is_refused_naming_it_and_what_is_left(
    staff: dict[str, StaffUser],
) -> None:
    publish(
        staff,
        limits=[LimitSpec(subject="maker", amount=D("250.00"), currency="USD", days=0)],
    )
    first = payout_send_for_approval(by=staff["maker"], payout=_ready(draft(staff, "100.10")))
    assert first.status == S.PENDING_APPROVAL
    second = _ready(draft(staff, "150.00"))
    with pytest.raises(PayoutInvalid) as refused:
        payout_send_for_approval(by=staff["maker"], payout=second)
    assert refused.value.code == "limit_exceeded" and refused.value.status == 409
    (message,) = refused.value.by_field["amount"]
    assert "maker's daily limit of 250.00 USD" in message and "149.90 USD is left" in message
    second.refresh_from_db()
    assert second.status == S.DRAFT
    # Exactly what is left is within; a rejected payout no longer counts.
    payout_reject_first(staff, first)
    assert payout_send_for_approval(by=staff["maker"], payout=second).status == (S.PENDING_APPROVAL)


def payout_reject_first(staff: dict[str, StaffUser], payout: Payout) -> None:
    from payouts.approval.services import payout_reject

    payout_reject(payout=payout, by=staff["approver"], reason="wrong account")


def test_a_rolling_recipient_limit_counts_other_makers_in_the_window(
    staff: dict[str, StaffUser],
) -> None:
    publish(
        staff,
        limits=[LimitSpec(subject="recipient", amount=D("300.00"), currency="USD", days=7)],
    )
    environment = make_environment()
    account = make_virtual_account(environment)
    recipient = make_recipient(environment, account.end_user, created_by=staff["approver2"])
    common = {"environment": environment, "virtual_account": account, "recipient": recipient}
    old = submit(make_draft(maker=staff["maker_approver"], amount="250.00", **common))
    Payout.objects.filter(pk=old.pk).update(submitted_at=timezone.now() - timedelta(days=8))
    recent = submit(make_draft(maker=staff["maker_approver"], amount="200.00", **common))
    assert recent.status == S.PENDING_APPROVAL
    mine = _ready(make_draft(maker=staff["maker"], amount="100.01", **common))
    with pytest.raises(PayoutInvalid) as refused:
        payout_send_for_approval(by=staff["maker"], payout=mine, confirm_duplicate=True)
    assert "recipient's 7-day rolling limit" in refused.value.by_field["amount"][0]
    assert "100.00 USD is left" in refused.value.by_field["amount"][0]


def test_an_approver_withdraws_their_approval_and_the_payout_waits_for_that_step(
    staff: dict[str, StaffUser],
) -> None:
    publish(staff, RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN))
    payout = submit(draft(staff, "15000.00"))
    payout_approve(payout=payout, by=staff["approver"])
    payout_approve(payout=payout, by=staff["admin"])
    payout.refresh_from_db()
    assert payout.status == S.APPROVED
    payout_approval_withdraw(payout=payout, by=staff["approver"], reason="wrong invoice")
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL and payout.approved_amount is None
    withdrawn = Approval.objects.get(payout=payout, approver=staff["approver"])
    assert withdrawn.voided_at and withdrawn.void_reason == "withdrawn: wrong invoice"
    entry = AuditEntry.objects.get(action="payout.approval_withdrawn")
    assert entry.details["reason"] == "wrong invoice" and entry.details["step"] == 1
    # Step 1 is current again: the admin's step-2 approval stands, another approver completes;
    # who withdrew has had their say in this round (a refusal, never the database's).
    with pytest.raises(PayoutActionRefused):
        payout_approve(payout=payout, by=staff["admin"])
    with pytest.raises(PayoutActionRefused) as again:
        payout_approve(payout=payout, by=staff["approver"])
    assert (again.value.code, again.value.status) == ("withdrawn", 409)
    assert payout_approve(payout=payout, by=staff["approver2"]).complete


def test_withdrawing_needs_your_own_approval_a_reason_and_no_release(
    staff: dict[str, StaffUser],
) -> None:
    payout = submit(draft(staff))
    with pytest.raises(PayoutActionRefused) as none:
        payout_approval_withdraw(payout=payout, by=staff["approver"], reason="x")
    assert none.value.code == "no_approval" and none.value.status == 409
    payout_approve(payout=payout, by=staff["approver"])
    with pytest.raises(PayoutActionRefused) as blank:
        payout_approval_withdraw(payout=payout, by=staff["approver"], reason="  ")
    assert (blank.value.code, blank.value.status) == ("reason_required", 400)
    Payout.objects.filter(pk=payout.pk).update(otp_sent_to="ops@pay.test")
    with pytest.raises(PayoutActionRefused) as released:
        payout_approval_withdraw(payout=payout, by=staff["approver"], reason="changed my mind")
    assert released.value.code == "released"
    payout.refresh_from_db()
    assert payout.status == S.APPROVED and payout.approvals.filter(voided_at=None).count() == 1


def test_the_impact_preview_shows_chains_and_limits_and_writes_nothing(
    staff: dict[str, StaffUser],
) -> None:
    big = submit(draft(staff, "15000.00"))
    small = submit(draft(staff, "20.00"))
    rules = [RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN)]
    limits = [LimitSpec(subject="maker", amount=D("15010.00"), currency="USD", days=0)]
    before = list(Payout.objects.values_list("pk", "approvals_required", "approval_chain"))
    rows = {row.payout.pk: row for row in policy_impact(rules=rules, default=1, limits=limits)}
    assert (rows[big.pk].required_now, rows[big.pk].required_under_new) == (1, 2)
    assert rows[big.pk].chain_new_label == (
        "1 holder of the Finance approver role, then 1 holder of the Admin role"
    )
    # Each is counted as if submitted now, the other one included.
    assert rows[big.pk].breach is not None and rows[big.pk].breach.left == D("15010.00") - D("20")
    assert rows[small.pk].breach is not None and rows[small.pk].breach.left == D("10.00")
    assert rows[small.pk].chain_now == rows[small.pk].chain_new
    assert list(Payout.objects.values_list("pk", "approvals_required", "approval_chain")) == before
    assert not ApprovalPolicy.objects.exists()


@pytest.mark.parametrize(
    ("rules", "extra", "field"),
    [
        ([RuleSpec(required_approvals=1, chain=(ChainStep("compliance", 1),))], {}, "rules"),
        ([RuleSpec(required_approvals=1, maker_roles=frozenset({"nobody"}))], {}, "rules"),
        ([RuleSpec(required_approvals=1, channel="fax")], {}, "rules"),
        ([], {"limits": [LimitSpec("team", D("1"), "USD")]}, "limits"),
        ([], {"recipient_approver_roles": ["nobody"]}, "recipient_approver_roles"),
    ],
)
def test_publishing_refuses_a_policy_it_could_not_apply(
    staff: dict[str, StaffUser], rules: list[RuleSpec], extra: dict[str, object], field: str
) -> None:
    with pytest.raises(PolicyInvalid) as refused:
        publish(staff, *rules, **extra)
    assert refused.value.status == 400 and refused.value.errors[0].field == field
    assert not ApprovalPolicy.objects.exists()


def test_the_policy_keeps_limits_and_recipient_approver_roles(staff: dict[str, StaffUser]) -> None:
    from payouts.approval.policy import recipient_approver_roles_current

    assert recipient_approver_roles_current() == []
    policy = publish(
        staff,
        limits=[LimitSpec("recipient", D("100.50"), "usd", days=7)],
        recipient_approver_roles=["finance_approver", "admin"],
    )
    assert policy.limit_specs() == [LimitSpec("recipient", D("100.50"), "USD", days=7)]
    assert recipient_approver_roles_current() == ["finance_approver", "admin"]
    entry = AuditEntry.objects.get(action="approval_policy.published")
    assert entry.details["limits"][0]["amount"] == "100.50"


@pytest.mark.parametrize(
    ("scopes", "allowed"),
    [(frozenset({"admin"}), False), (frozenset({"admin", "approve"}), True), (None, True)],
)
def test_an_api_token_fills_a_role_step_only_with_the_approve_scope(
    staff: dict[str, StaffUser], scopes: frozenset[str] | None, allowed: bool
) -> None:
    from staff.step_up import Proof, proof_attach

    publish(staff, RuleSpec(required_approvals=2, chain=APPROVER_THEN_ADMIN))
    payout = submit(draft(staff))
    payout_approve(payout=payout, by=staff["approver"])
    admin = StaffUser.objects.get(pk=staff["admin"].pk)
    method = "session" if scopes is None else "token"
    proof_attach(admin, Proof(method=method, second_factor_at=timezone.now(), scopes=scopes))
    if allowed:
        assert payout_approve(payout=payout, by=admin).complete
    else:
        with pytest.raises(PayoutActionRefused) as refused:
            payout_approve(payout=payout, by=admin)
        assert refused.value.code == "not_permitted"


def test_each_step_is_announced_to_the_people_who_may_fill_it(
    staff: dict[str, StaffUser], django_capture_on_commit_callbacks: Any
) -> None:
    from payouts.models import NotificationKind, PayoutNotification

    publish(staff, RuleSpec(required_approvals=2, chain=APPROVER_THEN_ADMIN))

    def told() -> set[str]:
        rows = PayoutNotification.objects.filter(kind=NotificationKind.WAITING_FOR_APPROVAL)
        return {row.recipient.email for row in rows.select_related("recipient")}

    with django_capture_on_commit_callbacks(execute=True):
        payout = submit(draft(staff))
    assert told() == {staff[w].email for w in ("maker_approver", "approver", "approver2")}
    PayoutNotification.objects.all().delete()
    with django_capture_on_commit_callbacks(execute=True):
        payout_approve(payout=payout, by=staff["approver"])
    assert told() == {staff["admin"].email}


@pytest.mark.parametrize(
    ("language", "count", "chain"),
    [
        ("en", "0 of 2", "1 holder of the Finance approver role, then 1 holder of the Admin role"),
        (
            "es",
            "0 de 2",
            "1 titular del rol Aprobador de finanzas, luego 1 titular del rol Administrador",
        ),
        (
            "pt-br",
            "0 de 2",
            "1 titular da função Aprovador de finanças, depois 1 titular da função Administrador",
        ),
    ],
)
def test_the_payout_page_states_its_chain_and_count_in_the_readers_language(
    staff: dict[str, StaffUser], language: str, count: str, chain: str
) -> None:
    from tests.identity import client_signed_in

    publish(staff, RuleSpec(required_approvals=2, min_amount=D("10000"), chain=APPROVER_THEN_ADMIN))
    payout = submit(draft(staff, "15000.00"))
    approver = staff["approver"]
    approver.language = language
    approver.save(update_fields=["language"])

    page = client_signed_in(approver).get(f"/payouts/{payout.pk}/").content.decode()

    assert f'data-testid="approval-chain">{chain}</span>' in page
    assert f">{count}<" in page
