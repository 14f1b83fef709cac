"""Virtual accounts and recipients against the emulator: verified users only, activation on the
emulator clock, balance with its as-of time, deposits once, field errors on the right field."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from accounts.events import virtual_account_apply_event
from accounts.models import Deposit, Recipient, VirtualAccount, VirtualAccountStatus
from accounts.recipients import recipient_create
from accounts.virtual_accounts import virtual_account_create, virtual_account_refresh
from gateway.models import Environment, UpstreamCall
from staff.errors import ServiceError
from staff.models import AuditEntry, StaffUser
from tests.directory.conftest import WIRE_RECIPIENT, emulator_events, user_values
from tests.payouts.conftest import q_sync  # noqa: F401  (fixture reused here)
from users.models import EndUser, TimelineKind
from users.services import end_user_create


@pytest.fixture
def verified(sandbox: Environment, staff: dict[str, StaffUser]) -> EndUser:
    return end_user_create(environment=sandbox, by=staff["compliance"], **user_values())


def activate(live_emulator: Any) -> None:
    live_emulator.advance(30)
    live_emulator.control("POST", "tick")


def test_a_virtual_account_is_refused_for_an_unverified_user_before_any_call(
    sandbox: Environment, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    rejected = end_user_create(
        environment=sandbox, by=staff["compliance"], **user_values("r+reject@example.com")
    )
    with pytest.raises(ServiceError) as refused:
        virtual_account_create(end_user=rejected, mode="fiat", by=staff["finance_maker"])
    assert refused.value.code == "end_user_not_verified"
    assert [e.field for e in refused.value.errors] == ["end_user_id"]
    assert VirtualAccount.objects.count() == 0
    assert live_emulator.witness.count("/v1/virtual-accounts", "POST") == 0


def test_the_upstreams_refusal_lands_on_end_user_id_and_leaves_nothing(
    sandbox: Environment, staff: dict[str, StaffUser]
) -> None:
    waiting = end_user_create(
        environment=sandbox, by=staff["compliance"], **user_values("w+review@example.com")
    )
    # Our mirror wrongly believes the user verified: the upstream's own check still holds.
    EndUser.objects.filter(pk=waiting.pk).update(verification_status="verified")
    waiting.refresh_from_db()
    with pytest.raises(ServiceError) as refused:
        virtual_account_create(end_user=waiting, mode="fiat", by=staff["finance_maker"])
    assert refused.value.status == 400
    assert refused.value.code == "user_not_verified"
    assert [e.field for e in refused.value.errors] == ["end_user_id"]
    assert VirtualAccount.objects.count() == 0


def test_activation_follows_the_emulator_clock_and_the_balance_has_an_as_of(
    verified: EndUser, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    va = virtual_account_create(end_user=verified, mode="crypto", by=staff["finance_maker"])
    assert va.status == VirtualAccountStatus.ACTIVATING and va.mode == "crypto"
    assert va.available_balance is None
    activate(live_emulator)
    va = virtual_account_refresh(virtual_account=va, by=staff["finance_approver"])
    assert va.status == VirtualAccountStatus.ACTIVE
    assert va.activated_at is not None and va.routing_number
    assert va.available_balance == Decimal("0.00") and va.currency == "USD"
    assert va.balance_as_of is not None
    assert AuditEntry.objects.filter(
        action="virtual_account.created", actor=staff["finance_maker"]
    ).exists()


def test_a_deposit_is_recorded_once_and_the_balance_follows(
    verified: EndUser, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    va = virtual_account_create(end_user=verified, mode="fiat", by=staff["admin"])
    activate(live_emulator)
    live_emulator.control(
        "POST", "deposits", json={"virtual_account_id": va.upstream_id, "amount": "1500.25"}
    )
    (deposit,) = emulator_events(
        verified.environment, event="virtual_account.deposit_funds_received"
    )
    for _ in range(2):
        virtual_account_apply_event(
            environment=verified.environment, event_type=deposit["event"], data=deposit["data"]
        )
    (recorded,) = Deposit.objects.filter(virtual_account=va)
    assert recorded.amount == Decimal("1500.25") and recorded.currency == "USD"
    va = virtual_account_refresh(virtual_account=va, by=staff["admin"])
    assert va.available_balance == Decimal("1500.25")


def test_the_balance_is_read_when_the_account_activates_and_after_each_deposit(
    verified: EndUser,
    staff: dict[str, StaffUser],
    live_emulator: Any,
    q_sync: None,  # noqa: F811
) -> None:
    """Nobody presses Refresh: the activation event, then each deposit event, queue one
    background read of the balance after commit (a worker runs it; here, inline on commit)."""
    va = virtual_account_create(end_user=verified, mode="fiat", by=staff["finance_maker"])
    activate(live_emulator)
    (activated,) = emulator_events(verified.environment, event="virtual_account.activated")
    for _ in range(2):  # delivered twice: read once
        virtual_account_apply_event(
            environment=verified.environment, event_type=activated["event"], data=activated["data"]
        )
    va.refresh_from_db()
    assert va.status == VirtualAccountStatus.ACTIVE
    assert va.available_balance == Decimal("0.00") and va.balance_as_of is not None
    assert live_emulator.witness.count("/balance", "GET") == 1
    # Within the call budget: the upstream's background share, never a staff member's.
    assert set(
        UpstreamCall.objects.filter(operation="virtual_account_balance").values_list(
            "priority", flat=True
        )
    ) == {"background"}

    live_emulator.control(
        "POST", "deposits", json={"virtual_account_id": va.upstream_id, "amount": "1500.25"}
    )
    (deposit,) = emulator_events(
        verified.environment, event="virtual_account.deposit_funds_received"
    )
    virtual_account_apply_event(
        environment=verified.environment, event_type=deposit["event"], data=deposit["data"]
    )
    va.refresh_from_db()
    assert va.available_balance == Decimal("1500.25")
    assert live_emulator.witness.count("/balance", "GET") == 2


def test_an_approver_cannot_open_virtual_accounts(
    verified: EndUser, staff: dict[str, StaffUser]
) -> None:
    with pytest.raises(PermissionDenied):
        virtual_account_create(end_user=verified, mode="fiat", by=staff["finance_approver"])


def test_a_bad_routing_number_is_caught_on_its_field_before_any_call(
    verified: EndUser, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    with pytest.raises(ServiceError) as bad:
        recipient_create(
            end_user=verified,
            by=staff["finance_maker"],
            values={**WIRE_RECIPIENT, "routing_number": "021000022"},
        )
    assert [e.field for e in bad.value.errors] == ["account.routing_number"]
    assert "check digit" in bad.value.errors[0].message
    assert Recipient.objects.count() == 0
    assert live_emulator.witness.count("/v1/recipients", "POST") == 0


def test_a_wire_recipient_is_registered_with_who_created_it(
    verified: EndUser, staff: dict[str, StaffUser]
) -> None:
    recipient = recipient_create(
        end_user=verified, by=staff["finance_maker"], values=WIRE_RECIPIENT
    )
    assert recipient.upstream_id and recipient.created_by == staff["finance_maker"]
    assert recipient.upstream_payload["account"]["routing_number"] == "021000021"
    entry = AuditEntry.objects.get(action="recipient.created")
    assert entry.details["after"]["account_number"] == "…6789"  # never the full number


def test_swift_needs_an_iban_where_the_banks_country_uses_one(
    verified: EndUser, staff: dict[str, StaffUser]
) -> None:
    swift = {
        **WIRE_RECIPIENT,
        "kind": "company",
        "company_name": "Müller GmbH",
        "country": "DE",
        "account_type": "SWIFT",
        "swift_code": "DEUTDEFF",
        "routing_number": "",
        "account_number": "DE89370400440532013001",
    }
    with pytest.raises(ServiceError) as bad:
        recipient_create(end_user=verified, by=staff["finance_maker"], values=swift)
    assert [e.field for e in bad.value.errors] == ["account.account_number"]
    assert "IBAN" in bad.value.errors[0].message
    recipient = recipient_create(
        end_user=verified,
        by=staff["finance_maker"],
        values={**swift, "account_number": "DE89 3704 0044 0532 0130 00"},
    )
    assert recipient.account_number == "DE89370400440532013000"
    assert recipient.display_name == "Müller GmbH"


def test_the_upstreams_field_errors_come_back_on_our_field_names(
    sandbox: Environment, staff: dict[str, StaffUser]
) -> None:
    unknown = EndUser.objects.create(
        environment=sandbox,
        upstream_id="00000000-0000-4000-8000-000000000000",
        email="ghost@example.com",
        verification_status="verified",
    )
    with pytest.raises(ServiceError) as refused:
        recipient_create(end_user=unknown, by=staff["finance_maker"], values=WIRE_RECIPIENT)
    assert [e.field for e in refused.value.errors] == ["end_user_id"]
    assert Recipient.objects.count() == 0


def test_the_activation_schedule_brings_an_account_to_active_without_events(
    verified: EndUser, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    from datetime import timedelta

    from accounts.tasks import virtual_accounts_track_activation

    va = virtual_account_create(end_user=verified, mode="fiat", by=staff["compliance"])
    VirtualAccount.objects.filter(pk=va.pk).update(created_at=va.created_at - timedelta(minutes=1))
    assert virtual_accounts_track_activation() == 1
    va.refresh_from_db()
    assert va.status == VirtualAccountStatus.ACTIVATING  # not yet due upstream
    activate(live_emulator)
    virtual_accounts_track_activation()
    va.refresh_from_db()
    assert va.status == VirtualAccountStatus.ACTIVE and va.balance_as_of is not None


def test_a_staff_refresh_that_changes_the_account_writes_one_timeline_line_and_audit_entry(
    verified: EndUser, staff: dict[str, StaffUser], live_emulator: Any
) -> None:
    va = virtual_account_create(end_user=verified, mode="fiat", by=staff["finance_maker"])
    activate(live_emulator)
    va = virtual_account_refresh(virtual_account=va, by=staff["finance_approver"])
    (line,) = va.timeline.filter(summary__startswith="Refreshed from the upstream")
    assert line.kind == TimelineKind.STAFF and line.actor == staff["finance_approver"]
    assert "status" in line.summary.split(": ", 1)[1].split(", ")
    assert line.data == {}
    (entry,) = AuditEntry.objects.filter(action="virtual_account.refreshed")
    assert entry.actor == staff["finance_approver"]
    assert entry.details["before"]["status"] == VirtualAccountStatus.ACTIVATING
    assert entry.details["after"]["status"] == VirtualAccountStatus.ACTIVE
