"""Applying upstream events: idempotent, order-tolerant, mirroring unknown records, refusing
malformed data. Real event payloads come from the emulator; ordering rules are also unit-tested."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from accounts.events import virtual_account_apply_event
from accounts.models import Deposit, VirtualAccount
from accounts.ordering import should_move
from gateway.models import Environment, EnvironmentKind
from staff.models import AuditEntry
from users.events import end_user_apply_event
from users.mirror import EventDataError
from users.models import EndUser, EndUserTimelineEntry
from users.ordering import UserEvent, UserKnown, decide_user_event

T0 = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
USER = "3f0c1d2e-1111-4222-8333-444455556666"
VA = "9a8b7c6d-1111-4222-8333-444455556666"


@pytest.fixture
def environment(db: None) -> Environment:
    return Environment.objects.create(
        name="events", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
    )


def created(event_id: str = "evt_c") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "user_id": USER,
        "type": "individual",
        "email": "ana@example.com",
        "phone": "+525512345678",
        "status": "unverified",
        "verification_status": "not_started",
        "verification_mode": "automatic",
        "created_at": "2026-11-21T10:00:00.000Z",
        "verification_triggered": True,
    }


def accepted(event_id: str = "evt_a", ver: str = "ver_1") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "user_id": USER,
        "id": ver,
        "verification_status": "verified",
        "kyc_type": "full",
    }


def failed(event_id: str = "evt_f", ver: str = "ver_2") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "user_id": USER,
        "id": ver,
        "verification_status": "rejected",
        "reasons": ["document_unreadable"],
    }


def updated(event_id: str, at: datetime, email: str) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "user_id": USER,
        "type": "individual",
        "email": email,
        "phone": "+525512345678",
        "status": "verified",
        "verification_status": "verified",
        "updated_at": at.isoformat().replace("+00:00", "Z"),
        "updated_fields": {"email": email},
        "requires_reverification": False,
        "verification_triggered": False,
    }


def apply(environment: Environment, event: str, data: dict[str, Any]) -> EndUser | None:
    return end_user_apply_event(environment=environment, event_type=event, data=data)


@pytest.mark.parametrize(
    "order", list(itertools.permutations(["user.created", "user.verification.accepted"]))
)
def test_created_and_accepted_end_verified_in_either_order(
    environment: Environment, order: tuple[str, ...]
) -> None:
    payloads = {"user.created": created(), "user.verification.accepted": accepted()}
    for event in order:
        apply(environment, event, payloads[event])
    user = EndUser.objects.get(upstream_id=USER)
    assert user.verification_status == "verified" and user.status == "verified"
    assert user.email == "ana@example.com"
    assert user.timeline.count() == 2


def test_an_event_delivered_twice_is_applied_once(environment: Environment) -> None:
    apply(environment, "user.created", created())
    apply(environment, "user.verification.failed", failed())
    apply(environment, "user.verification.failed", failed())
    user = EndUser.objects.get(upstream_id=USER)
    assert user.reasons == ["document_unreadable"]
    assert EndUserTimelineEntry.objects.filter(event_id="evt_f").count() == 1
    assert AuditEntry.objects.filter(action="end_user.event.user.verification.failed").count() == 1


def test_an_older_update_never_overwrites_a_newer_one(environment: Environment) -> None:
    apply(environment, "user.created", created())
    apply(environment, "user.updated", updated("evt_new", T0 + timedelta(minutes=5), "new@x.com"))
    apply(environment, "user.updated", updated("evt_old", T0 + timedelta(minutes=1), "old@x.com"))
    user = EndUser.objects.get(upstream_id=USER)
    assert user.email == "new@x.com"
    old = user.timeline.get(event_id="evt_old")
    assert not old.applied and "ignored" in old.summary


def test_a_late_creation_event_does_not_undo_a_verification(environment: Environment) -> None:
    apply(environment, "user.verification.accepted", accepted())
    apply(environment, "user.updated", updated("evt_u", T0 + timedelta(minutes=5), "new@x.com"))
    apply(environment, "user.created", created())
    user = EndUser.objects.get(upstream_id=USER)
    assert user.verification_status == "verified"
    assert user.email == "new@x.com"


def test_an_unknown_user_is_mirrored_from_any_of_its_events(environment: Environment) -> None:
    user = apply(environment, "user.verification.failed", failed())
    assert user is not None and user.upstream_id == USER
    assert user.verification_status == "rejected"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"event_id": "evt_x"}, "without user_id"),
        ({**created(), "verification_status": "maybe"}, "verification_status"),
        ({**created(), "created_at": "yesterday"}, "created_at"),
    ],
)
def test_malformed_user_events_are_refused_clearly(
    environment: Environment, data: dict[str, Any], message: str
) -> None:
    with pytest.raises(EventDataError, match=message):
        apply(environment, "user.created", data)
    assert EndUser.objects.count() == 0


def test_the_decision_is_pure_and_explains_itself() -> None:
    known = UserKnown(
        upstream_updated_at=T0,
        verification_status="verified",
        verification_id="ver_1",
        is_new=False,
    )
    replay = decide_user_event(
        known, event=UserEvent.VERIFICATION_ACCEPTED, event_at=None, verification_id="ver_1"
    )
    assert not replay.fields and not replay.verification
    older = decide_user_event(known, event=UserEvent.UPDATED, event_at=T0 - timedelta(seconds=1))
    assert not older.fields
    restart = decide_user_event(
        known,
        event=UserEvent.UPDATED,
        event_at=T0 + timedelta(seconds=1),
        restarts_verification=True,
    )
    assert restart.fields and restart.verification and restart.refresh


def va_created(event_id: str = "evt_vc") -> dict[str, Any]:
    return {"event_id": event_id, "virtual_account_id": VA, "user_id": USER, "status": "activating"}


def va_activated(event_id: str = "evt_va") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "virtual_account_id": VA,
        "user_id": USER,
        "status": "active",
        "account_number": "123456789012",
        "routing_number": "021000021",
    }


def deposit(event_id: str, deposit_id: str, amount: str = "100.00") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "virtual_account_id": VA,
        "deposit_id": deposit_id,
        "amount": amount,
        "currency": "USD",
        "source": {"payment_rail": "ACH", "sender_name": "ACME", "trace_number": "1"},
        "created_at": "2026-11-21T10:05:00.000Z",
    }


def va_apply(environment: Environment, event: str, data: dict[str, Any]) -> VirtualAccount | None:
    return virtual_account_apply_event(environment=environment, event_type=event, data=data)


def test_a_late_created_event_does_not_move_an_account_back_to_activating(
    environment: Environment,
) -> None:
    va_apply(environment, "virtual_account.activated", va_activated())
    va_apply(environment, "virtual_account.created", va_created())
    va = VirtualAccount.objects.get(upstream_id=VA)
    assert va.status == "active" and va.account_number == "123456789012"
    assert va.end_user.upstream_id == USER  # the unknown user was mirrored too


def test_deposits_are_recorded_once_per_deposit_id(environment: Environment) -> None:
    va_apply(environment, "virtual_account.created", va_created())
    va_apply(environment, "virtual_account.activated", va_activated())
    va_apply(environment, "virtual_account.deposit_funds_received", deposit("evt_d1", "dep_1"))
    va_apply(environment, "virtual_account.deposit_funds_received", deposit("evt_d1", "dep_1"))
    # Same deposit under another event id (a re-emission): still one deposit.
    va_apply(environment, "virtual_account.deposit_funds_received", deposit("evt_d2", "dep_1"))
    va_apply(
        environment, "virtual_account.deposit_funds_received", deposit("evt_d3", "dep_2", "5.5")
    )
    assert sorted(Deposit.objects.values_list("deposit_id", flat=True)) == ["dep_1", "dep_2"]


@pytest.mark.parametrize("amount", ["-1", "abc", "1.234", "0"])
def test_a_deposit_with_a_bad_amount_is_refused(environment: Environment, amount: str) -> None:
    va_apply(environment, "virtual_account.created", va_created())
    with pytest.raises(EventDataError, match="amount"):
        va_apply(environment, "virtual_account.deposit_funds_received", deposit("e", "d", amount))
    assert Deposit.objects.count() == 0


def test_account_statuses_only_move_forward() -> None:
    assert should_move("activating", "active", is_new=False)
    assert not should_move("active", "activating", is_new=False)
    assert should_move("active", "activating", is_new=True)
    with pytest.raises(ValueError):
        should_move("active", "exploded", is_new=False)


def test_real_emulator_events_give_the_same_state_in_any_order(
    sandbox: Environment, staff: Any, live_emulator: Any
) -> None:
    """The emulator's own payloads, applied forwards, backwards and twice: one final state."""
    from accounts.virtual_accounts import virtual_account_create
    from tests.directory.conftest import emulator_events, user_values
    from users.services import end_user_create, end_user_update

    user = end_user_create(environment=sandbox, by=staff["compliance"], **user_values())
    end_user_update(end_user=user, by=staff["compliance"], values={"email": "ana2@example.com"})
    va = virtual_account_create(end_user=user, mode="fiat", by=staff["finance_maker"])
    live_emulator.advance(30)
    live_emulator.control("POST", "tick")
    events = emulator_events(sandbox)
    assert {e["event"] for e in events} >= {
        "user.created",
        "user.verification.accepted",
        "user.updated",
        "virtual_account.created",
        "virtual_account.activated",
    }
    other = Environment.objects.create(name="replay", kind="sandbox", base_url=sandbox.base_url)

    def replay(sequence: list[dict[str, Any]]) -> tuple[Any, ...]:
        for item in sequence:
            if item["event"].startswith("user."):
                end_user_apply_event(environment=other, event_type=item["event"], data=item["data"])
            else:
                virtual_account_apply_event(
                    environment=other, event_type=item["event"], data=item["data"]
                )
        mirrored = EndUser.objects.get(environment=other, upstream_id=user.upstream_id)
        account = VirtualAccount.objects.get(environment=other, upstream_id=va.upstream_id)
        return (
            mirrored.email,
            mirrored.verification_status,
            account.status,
            account.routing_number,
        )

    forwards = replay(events)
    assert forwards == ("ana2@example.com", "verified", "active", "021000021")
    VirtualAccount.objects.filter(environment=other).delete()
    EndUser.objects.filter(environment=other).delete()
    assert replay(list(reversed(events))) == forwards
    assert replay(events + list(reversed(events))) == forwards  # everything twice more


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_first_events_of_one_user_make_one_mirror() -> None:
    """Two workers receive the first two events of an unknown user at the same moment."""
    import threading

    from django.db import connections

    environment = Environment.objects.create(
        name="race", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
    )
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def deliver(event: str, data: dict[str, Any]) -> None:
        try:
            barrier.wait(timeout=10)
            apply(environment, event, data)
        except BaseException as exc:  # kept for the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=deliver, args=("user.created", created())),
        threading.Thread(target=deliver, args=("user.verification.accepted", accepted())),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    user = EndUser.objects.get(upstream_id=USER)
    assert user.verification_status == "verified"
    assert user.timeline.count() == 2
