"""Sign-in lockout (staff.lockout): per account, a back-off that doubles and is capped, the
forwarded-header probe of issue 19, and the one notice to the account's owner.

Time is controlled by moving the recorded failures back (`rewind`), never by sleeping.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

import pytest
from axes.models import AccessAttempt
from django.core import mail
from django.db.models import F
from django.test import Client

from staff.bootstrap import DEMO_PASSWORD
from staff.lockout import Decision, account_decision, lockout_decide
from staff.models import AuditEntry, StaffUser

APPROVER = "approver@payops.local"
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
BASE = timedelta(seconds=30)
CAP = timedelta(minutes=15)


def decide(failures: int, seconds_since_last: float) -> Decision:
    return lockout_decide(
        failures=failures,
        last_failure_at=T0,
        now=T0 + timedelta(seconds=seconds_since_last),
        limit=5,
        base=BASE,
        cap=CAP,
    )


# --- The pure decision --------------------------------------------------------------------------


def test_below_the_limit_sign_in_is_open() -> None:
    for failures in range(5):
        assert decide(failures, 0).locked is False
    assert lockout_decide(
        failures=0, last_failure_at=None, now=T0, limit=5, base=BASE, cap=CAP
    ) == Decision(locked=False, failures=0, delay=timedelta(0), retry_at=None)


def test_at_the_limit_the_base_wait_locks_and_then_opens() -> None:
    during = decide(5, 29)
    assert during.locked is True
    assert during.retry_at == T0 + BASE
    assert decide(5, 30).locked is False


def test_the_wait_doubles_with_each_further_failure() -> None:
    assert [decide(n, 0).delay.total_seconds() for n in range(5, 10)] == [30, 60, 120, 240, 480]
    assert decide(6, 59).locked is True
    assert decide(6, 60).locked is False


def test_the_wait_is_capped_so_the_rightful_person_always_gets_back_in() -> None:
    assert decide(10, 0).delay == CAP
    assert decide(10_000, 0).delay == CAP
    assert decide(10_000, CAP.total_seconds()).locked is False


# --- Through the sign-in page ---------------------------------------------------------------------


def sign_in(client: Client, password: str, email: str = APPROVER, **meta: str):  # type: ignore[no-untyped-def]
    return client.post("/login/", {"username": email, "password": password}, **meta)  # type: ignore[arg-type]


def rewind(seconds: float, email: str = APPROVER) -> None:
    """As if `seconds` had passed since the account's recorded failures."""
    AccessAttempt.objects.filter(username=email).update(
        attempt_time=F("attempt_time") - timedelta(seconds=seconds)
    )


@pytest.fixture
def backoff(settings):  # type: ignore[no-untyped-def]
    settings.PAYOPS_LOGIN_FAILURE_LIMIT = 3
    settings.PAYOPS_LOGIN_BACKOFF_SECONDS = 30
    settings.PAYOPS_LOGIN_BACKOFF_MAX_SECONDS = 120
    settings.PAYOPS_LOGIN_NOTICE_AFTER = 3


@pytest.mark.django_db
def test_locked_after_the_limit_refused_during_the_wait_allowed_after_it(
    demo_staff: dict[str, StaffUser], backoff: None
) -> None:
    client = Client()
    assert sign_in(client, "wrong").status_code == 200
    assert sign_in(client, "wrong").status_code == 200
    assert sign_in(client, "wrong").status_code == 429
    # The right password during the wait: refused, and not counted as a failure.
    refused = sign_in(client, DEMO_PASSWORD)
    assert refused.status_code == 429
    assert "_auth_user_id" not in client.session
    assert account_decision(APPROVER).failures == 3
    rewind(29)
    assert sign_in(client, DEMO_PASSWORD).status_code == 429
    rewind(2)
    assert sign_in(client, DEMO_PASSWORD).status_code == 302
    # Success clears the count: the next typo is just a typo.
    assert not AccessAttempt.objects.filter(username=APPROVER).exists()


@pytest.mark.django_db
def test_each_failure_after_a_wait_doubles_the_next_wait_up_to_the_cap(
    demo_staff: dict[str, StaffUser], backoff: None
) -> None:
    client = Client()
    for _ in range(3):
        sign_in(client, "wrong")
    assert account_decision(APPROVER).delay == timedelta(seconds=30)
    waits = []
    for _ in range(3):
        rewind(account_decision(APPROVER).delay.total_seconds())
        locked = sign_in(client, "wrong")  # the wait passed; the password is wrong again
        assert locked.status_code == 429
        waits.append(account_decision(APPROVER).delay.total_seconds())
    assert waits == [60, 120, 120]  # doubled, then capped at PAYOPS_LOGIN_BACKOFF_MAX_SECONDS
    rewind(119)
    assert sign_in(client, DEMO_PASSWORD).status_code == 429
    rewind(1)
    assert sign_in(client, DEMO_PASSWORD).status_code == 302


@pytest.mark.django_db
def test_the_locked_page_says_when_to_try_again(
    demo_staff: dict[str, StaffUser], backoff: None
) -> None:
    client = Client()
    for _ in range(3):
        response = sign_in(client, "wrong")
    body = response.content.decode()
    assert response.status_code == 429
    assert "Sign-in locked" in body
    assert "You can try again in <strong>" in body
    retry_at = account_decision(APPROVER).retry_at
    assert retry_at is not None
    assert f'<time datetime="{retry_at.isoformat()}">' in body


@pytest.mark.django_db
def test_probe_a_new_forwarded_address_per_try_does_not_sidestep_the_lock(
    demo_staff: dict[str, StaffUser],
) -> None:
    """Issue 19's probe: 15 wrong passwords, each from a new X-Forwarded-For, then the right one."""
    client = Client()
    for n in range(15):
        sign_in(
            client,
            "wrong",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n + 1}",
            HTTP_USER_AGENT=f"probe/{n}",  # a new user agent each time does not help either
        )
    # Nor does writing the email in another case: it names the same account.
    assert sign_in(client, DEMO_PASSWORD, email=APPROVER.upper()).status_code == 429
    response = sign_in(client, DEMO_PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.200")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    # The header was not believed: every failure is recorded against the real peer.
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"127.0.0.1"}


@pytest.mark.django_db
def test_probe_a_locked_account_stays_locked_from_any_other_address(
    demo_staff: dict[str, StaffUser], backoff: None
) -> None:
    for _ in range(3):
        sign_in(Client(), "wrong")
    forwarded = sign_in(Client(), DEMO_PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert forwarded.status_code == 429
    # Even a genuinely different peer address: the lock is the account's.
    other_peer = sign_in(Client(), DEMO_PASSWORD, REMOTE_ADDR="192.0.2.44")
    assert other_peer.status_code == 429


@pytest.mark.django_db
def test_a_configured_proxys_forwarded_address_is_recorded(
    demo_staff: dict[str, StaffUser],
    settings,  # type: ignore[no-untyped-def]
) -> None:
    settings.PAYOPS_TRUSTED_PROXIES = ["127.0.0.1"]
    sign_in(Client(), "wrong", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.7"]
    failed = AuditEntry.objects.get(action="staff.login_failed")
    assert failed.details["ip"] == "203.0.113.7"
    assert sign_in(Client(), DEMO_PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.8").status_code == 302
    assert AuditEntry.objects.get(action="staff.login").details["ip"] == "203.0.113.8"


# --- Telling the owner ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_owner_is_told_once_with_time_count_and_address(
    demo_staff: dict[str, StaffUser], backoff: None
) -> None:
    client = Client()
    sign_in(client, "wrong", REMOTE_ADDR="192.0.2.10")
    sign_in(client, "wrong", REMOTE_ADDR="192.0.2.11")
    assert mail.outbox == []
    sign_in(client, "wrong", REMOTE_ADDR="192.0.2.12")
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [APPROVER]
    assert "3 failed sign-in attempts" in message.body
    assert "192.0.2.12" in message.body
    assert " UTC" in message.body
    assert DEMO_PASSWORD not in message.body and "wrong" not in message.body
    entry = AuditEntry.objects.get(action="staff.login_failures_notified")
    assert entry.target_id == str(demo_staff["finance_approver"].pk)
    assert entry.details["failures"] == 3
    assert entry.details["ip"] == "192.0.2.12"
    # No mail storm: refused attempts and further failures after each wait send nothing more.
    for _ in range(4):
        sign_in(client, "wrong")
        rewind(200)
        sign_in(client, "wrong")
    assert len(mail.outbox) == 1
    assert AuditEntry.objects.filter(action="staff.login_failures_notified").count() == 1
    # Once the person has signed in, a new run of failures is told again.
    rewind(200)
    assert sign_in(client, DEMO_PASSWORD).status_code == 302
    for _ in range(3):
        sign_in(Client(), "wrong")
    assert len(mail.outbox) == 2


@pytest.mark.django_db(transaction=True)
def test_unknown_accounts_are_locked_but_nobody_is_mailed(
    demo_staff: dict[str, StaffUser], backoff: None
) -> None:
    for _ in range(3):
        response = sign_in(Client(), "wrong", email="nobody@payops.local")
    assert response.status_code == 429
    assert mail.outbox == []


@pytest.mark.django_db(transaction=True)
def test_probe_through_uvicorn_started_as_make_run_starts_it(
    demo_staff: dict[str, StaffUser],
) -> None:
    """The probe over real HTTP: uvicorn with make run's flags must not take X-Forwarded-For
    from the loopback as the client (its default), and the lock holds whatever the header says."""
    import httpx

    from config.asgi import application
    from scripts.run_all import default_children
    from tests.servers import serve_in_thread

    web = next(child.argv for child in default_children(sys.executable) if child.name == "web")
    flag = web[web.index("--forwarded-allow-ips") + 1] if "--forwarded-allow-ips" in web else None
    with (
        serve_in_thread(application, lifespan="off", forwarded_allow_ips=flag) as url,
        httpx.Client(base_url=url) as http,
    ):
        token = http.get("/login/").cookies["csrftoken"]

        def attempt(password: str, n: int) -> httpx.Response:
            return http.post(
                "/login/",
                data={"username": APPROVER, "password": password, "csrfmiddlewaretoken": token},
                headers={"X-Forwarded-For": f"198.51.100.{n}"},
            )

        for n in range(1, 16):
            attempt("wrong", n)
        assert attempt(DEMO_PASSWORD, 200).status_code == 429
    addresses = AuditEntry.objects.filter(action="staff.login_failed").values_list(
        "details__ip", flat=True
    )
    assert set(addresses) == {"127.0.0.1"}
