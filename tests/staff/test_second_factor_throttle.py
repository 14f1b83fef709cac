"""The second step throttles guesses per person, across requests and processes (issue 30 item 6):
after N wrong codes even the right one waits 2**(N-1) seconds (docs/identity.md).

A probe saw the right code accepted at once after 12 wrong ones: wrong recovery-code guesses
counted only on the recovery codes (and wrong app codes only on the app), a throttled device did
not stop the others, and concurrent failures could overwrite each other's count. The clock the
throttle reads is moved here (`throttle_clock`), never slept on."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import close_old_connections
from django.test import Client
from django.utils import timezone

from staff.models import AuthenticatorDevice, StaffUser
from staff.roles import roles_sync
from staff.second_factor.recovery import recovery_codes_issue
from tests.identity import enrolled
from tests.staff.second_factor_support import code_now, password_signed_in, person

SIGN_IN_STEP = "/login/second-factor/"


class ThrottleClock:
    """The clock django-otp's throttle and ours read, moved forward at will."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def now(self) -> datetime:
        return timezone.now() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@pytest.fixture
def throttle_clock(monkeypatch: pytest.MonkeyPatch) -> ThrottleClock:
    clock = ThrottleClock()
    fake = SimpleNamespace(now=clock.now)
    monkeypatch.setattr("django_otp.models.timezone", fake)
    monkeypatch.setattr("staff.second_factor.models.timezone", fake)
    return clock


def _approver(email: str) -> tuple[StaffUser, AuthenticatorDevice]:
    roles_sync()
    user = person(email, "finance_approver")
    return user, enrolled(user)


def _wrong(device: AuthenticatorDevice) -> str:
    return str((int(code_now(device)) + 500_000) % 1_000_000).zfill(6)


def _passed(client: Client) -> bool:
    return client.get("/").status_code == 200


@pytest.mark.django_db
def test_the_right_code_after_twelve_wrong_ones_waits_the_doubled_time(
    throttle_clock: ThrottleClock,
) -> None:
    user, device = _approver("throttle-twelve@example.test")
    client = password_signed_in(user)
    for _ in range(12):
        throttle_clock.advance(10_000)  # each guess after the last one's wait: all are counted
        client.post(SIGN_IN_STEP, {"code": _wrong(device)})
    device.refresh_from_db()
    assert device.throttling_failure_count == 12
    client.post(SIGN_IN_STEP, {"code": code_now(device)})
    assert not _passed(client)
    throttle_clock.advance(2**11 - 5)
    client.post(SIGN_IN_STEP, {"code": code_now(device)})
    assert not _passed(client)
    throttle_clock.advance(10)
    client.post(SIGN_IN_STEP, {"code": code_now(device)})
    assert _passed(client)


@pytest.mark.django_db
def test_wrong_recovery_codes_hold_back_the_apps_code_and_the_other_way_round(
    throttle_clock: ThrottleClock,
) -> None:
    user, device = _approver("throttle-kinds@example.test")
    recovery_codes_issue(user=user, by=user)
    client = password_signed_in(user)
    for _ in range(3):
        throttle_clock.advance(100)
        client.post(SIGN_IN_STEP, {"code": "wrong-recovery"})
    client.post(SIGN_IN_STEP, {"code": code_now(device)})
    assert not _passed(client)  # the app's right code waits 4 s too
    device.refresh_from_db()
    assert device.throttling_failure_count == 3
    throttle_clock.advance(5)
    client.post(SIGN_IN_STEP, {"code": code_now(device)})
    assert _passed(client)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_guesses_from_two_processes_all_count(settings: Any) -> None:
    """Two sign-ins of one person guessing at once (threads with their own connections, as two
    server processes would be): every wrong code counts, none overwrites another's count."""
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # no wait while guessing: every guess is checked
    user, device = _approver("throttle-race@example.test")
    clients = [password_signed_in(user), password_signed_in(user)]
    wrong = _wrong(device)
    start = threading.Barrier(len(clients))
    errors: list[BaseException] = []

    def guess(client: Client) -> None:
        try:
            start.wait()
            for _ in range(6):
                client.post(SIGN_IN_STEP, {"code": wrong})
        except BaseException as exc:
            errors.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=guess, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    device.refresh_from_db()
    assert device.throttling_failure_count == 12
    settings.OTP_TOTP_THROTTLE_FACTOR = 1  # the doubling wait: 2**11 s after 12 failures
    client: Any = clients[0]
    client.post(SIGN_IN_STEP, {"code": code_now(device)})
    assert not _passed(client)
