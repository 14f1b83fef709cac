"""Registering a receiver catches up on what happened upstream while none was registered."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from accounts.models import VirtualAccount
from gateway.client import call_sync, upstream
from payouts.models import ChangeSource, Payout, PayoutStatus
from staff.models import AuditEntry, StaffUser
from tests.payouts.live import World, initiated
from users.models import EndUser
from webhooks.mirrors import BUDGET_SPENT
from webhooks.models import MissedEvent, WebhookEndpoint
from webhooks.services import webhook_catch_up_run, webhook_endpoint_register, webhook_secret_rotate

S = PayoutStatus


@pytest.fixture(autouse=True)
def _nobody_listens(settings: Any) -> None:
    # The emulator keeps deliveries queued until flushed: nothing is delivered in these tests.
    settings.WEBHOOKS_PUBLIC_BASE_URL = "http://127.0.0.1:9"


def _rejected_upstream_user(world: World) -> EndUser:
    """A user the upstream rejected at once (`+reject`); our mirror never heard of the decision."""
    email = f"kyc+reject-{uuid.uuid4().hex[:6]}@example.com"
    user = call_sync(
        upstream(world.environment).users.create,
        idempotency_key=str(uuid.uuid4()),
        email=email,
        phone_number="+15125550100",
        first_name="Rita",
        last_name="Reject",
        country="US",
    )
    return EndUser.objects.create(
        environment=world.environment,
        upstream_id=user.user_id,
        email=email,
        first_name="Rita",
        last_name="Reject",
        country="US",
    )


def _activating_account(world: World, end_user: EndUser) -> VirtualAccount:
    account = call_sync(
        upstream(world.environment).virtual_accounts.create,
        user_id=end_user.upstream_id,
        mode="fiat",
    )
    return VirtualAccount.objects.create(
        environment=world.environment,
        end_user=end_user,
        upstream_id=account.id,
        mode="fiat",
        status="activating",
    )


def test_registering_applies_what_changed_upstream_while_no_receiver_was_registered(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout = initiated(world, staff, "100.00")
    rejected = _rejected_upstream_user(world)
    account = _activating_account(world, EndUser.objects.exclude(pk=rejected.pk).get())
    world.tick(times=4)  # upstream: the payout completes, the account activates
    assert Payout.objects.get(pk=payout.pk).status == S.CREATED  # nobody told us

    # django-q2 runs the queued catch-up inline as the registration commits (q_sync).
    webhook_endpoint_register(environment=world.environment, by=staff["admin"])

    payout.refresh_from_db()
    assert payout.status == S.COMPLETED
    assert payout.status_changes.filter(source=ChangeSource.POLL).exists()
    rejected.refresh_from_db()
    # The decision is caught up; its reasons travel only in the event (interface.md 6.3: the
    # user record has no reasons field), so they stay unknown until someone asks the upstream.
    assert rejected.verification_status == "rejected"
    account.refresh_from_db()
    assert account.status == "active"
    # Recorded: the audit entry with each kind's counts, and the gap the event left.
    entry = AuditEntry.objects.get(action="webhooks.caught_up")
    assert entry.target_id == str(WebhookEndpoint.objects.get().pk)
    kinds = entry.details["kinds"]
    assert kinds["payout"]["changed"] == 1
    assert kinds["user"]["changed"] == 1
    assert kinds["virtual_account"]["changed"] == 1
    gap = MissedEvent.objects.get(upstream_id=payout.upstream_id)
    assert gap.observed_state == "COMPLETED"

    # Twice is once: nothing is left to change.
    moves = payout.status_changes.count()
    again = webhook_catch_up_run(environment=world.environment)
    assert again["payout"].changed == 0 and again["payout"].checked == 1  # watched for a return
    assert again["user"].checked == 0 and again["virtual_account"].checked == 0  # all final now
    assert payout.status_changes.count() == moves


def test_a_rotation_does_not_catch_up(world: World, staff: dict[str, StaffUser]) -> None:
    webhook_endpoint_register(environment=world.environment, by=staff["admin"])
    assert AuditEntry.objects.filter(action="webhooks.caught_up").count() == 1

    webhook_secret_rotate(environment=world.environment, by=staff["admin"])

    assert AuditEntry.objects.filter(action="webhooks.caught_up").count() == 1


def test_catch_up_stops_when_the_background_budget_is_spent(
    world: World, staff: dict[str, StaffUser]
) -> None:
    initiated(world, staff, "100.00")
    initiated(world, staff, "100.00")
    world.environment.background_share = 0
    world.environment.save(update_fields=["background_share"])
    calls_before = len(world.emulator.witness.api_requests())

    results = webhook_catch_up_run(environment=world.environment)

    assert results["payout"].stopped == BUDGET_SPENT
    assert results["payout"].checked == 0
    # Refused by our own limiter: no request reached the upstream.
    assert len(world.emulator.witness.api_requests()) == calls_before
