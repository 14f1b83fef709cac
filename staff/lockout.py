"""Sign-in lockout: per account, with a back-off that doubles, so nobody is locked out for good.

django-axes records the failed attempts (`AccessAttempt` rows, keyed on the account alone:
`AXES_LOCKOUT_PARAMETERS = ["username"]`); this module decides from them, in `lockout_decide`, a
pure function over explicit state in the style of `gateway.limiter.policy.decide`:

- below `PAYOPS_LOGIN_FAILURE_LIMIT` failures sign-in is open;
- from the limit on, each failure earns a wait of `PAYOPS_LOGIN_BACKOFF_SECONDS`, doubled for every
  further failure, at most `PAYOPS_LOGIN_BACKOFF_MAX_SECONDS`, counted from the last failure;
- during the wait every attempt is refused, even with the right password, and is NOT counted (so
  hammering the form does not lengthen the wait; only a wrong password after it does);
- once the wait has passed, the right password signs in and clears the count; failures older
  than `PAYOPS_LOGIN_FAILURE_MEMORY_HOURS` are forgotten.

The client address plays no part in the lock (a forwarded header cannot sidestep it), and there is
no separate per-address lock: one could be used to lock a person out from a shared address.

When an account reaches `PAYOPS_LOGIN_NOTICE_AFTER` failures, its owner is emailed once (time,
count, address) and the notice is audited; the next notice can come only after the person has
signed in again or the failure memory has passed, however long the attack goes on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone, translation
from django.utils.translation import gettext

from staff.actions import record_action  # no live page for these records: announce=False
from staff.client_address import client_ip
from staff.models import AuditEntry, StaffUser

logger = logging.getLogger("staff")

NOTICE_ACTION = "staff.login_failures_notified"
_MAX_DOUBLINGS = 32  # beyond this the cap has long been reached; keeps the arithmetic small


@dataclass(frozen=True)
class Decision:
    """Whether sign-in to an account is refused now, and until when."""

    locked: bool
    failures: int
    delay: timedelta  # the wait the failures so far have earned (zero below the limit)
    retry_at: datetime | None  # when sign-in is accepted again; None when not locked


def backoff_delay(failures: int, *, limit: int, base: timedelta, cap: timedelta) -> timedelta:
    """The wait after `failures` failures: none below the limit, base at it, doubling, capped."""
    if failures < limit:
        return timedelta(0)
    doublings = min(failures - limit, _MAX_DOUBLINGS)
    return min(base * (2**doublings), cap)


def lockout_decide(
    *,
    failures: int,
    last_failure_at: datetime | None,
    now: datetime,
    limit: int,
    base: timedelta,
    cap: timedelta,
) -> Decision:
    """Pure: is an account with `failures` failures, the last at `last_failure_at`, locked now?"""
    delay = backoff_delay(failures, limit=limit, base=base, cap=cap)
    if not delay or last_failure_at is None:
        return Decision(locked=False, failures=failures, delay=delay, retry_at=None)
    retry_at = last_failure_at + delay
    if now >= retry_at:
        return Decision(locked=False, failures=failures, delay=delay, retry_at=None)
    return Decision(locked=True, failures=failures, delay=delay, retry_at=retry_at)


# --- Settings -----------------------------------------------------------------------------------


def failure_limit() -> int:
    return int(settings.PAYOPS_LOGIN_FAILURE_LIMIT)


def backoff_base() -> timedelta:
    return timedelta(seconds=int(settings.PAYOPS_LOGIN_BACKOFF_SECONDS))


def backoff_cap() -> timedelta:
    return timedelta(seconds=int(settings.PAYOPS_LOGIN_BACKOFF_MAX_SECONDS))


def failure_memory() -> timedelta:
    return timedelta(hours=float(settings.PAYOPS_LOGIN_FAILURE_MEMORY_HOURS))


def notice_after() -> int:
    return int(settings.PAYOPS_LOGIN_NOTICE_AFTER)


# --- State (axes' rows) and the decision for a request ------------------------------------------


def login_username(request: HttpRequest | None, credentials: dict[str, Any] | None = None) -> str:
    """AXES_USERNAME_CALLABLE: the account an attempt names, as stored (lower-case email)."""
    field = settings.AXES_USERNAME_FORM_FIELD
    raw: Any = None
    if credentials:
        raw = credentials.get(field)
    elif request is not None:
        raw = request.POST.get(field)
    return str(raw or "").strip().lower()


def account_failures(username: str, *, now: datetime) -> tuple[int, datetime | None]:
    """(failures, last failure) remembered for an account, across every address and browser."""
    totals = AccessAttempt.objects.filter(
        username=username, attempt_time__gte=now - failure_memory()
    ).aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
    return int(totals["failures"] or 0), totals["last"]


def failing_accounts(*, at_least: int, now: datetime) -> dict[str, int]:
    """Accounts with at least `at_least` failures remembered (as `account_failures` counts
    them), with their count: what an alert on repeated sign-in failures watches."""
    rows = (
        AccessAttempt.objects.filter(attempt_time__gte=now - failure_memory())
        .values("username")
        .annotate(failures=Sum("failures_since_start"))
        .filter(failures__gte=at_least)
        .order_by("username")
    )
    return {row["username"]: int(row["failures"]) for row in rows}


def account_decision(username: str, *, now: datetime | None = None) -> Decision:
    now = now or timezone.now()
    failures, last = account_failures(username, now=now)
    return lockout_decide(
        failures=failures,
        last_failure_at=last,
        now=now,
        limit=failure_limit(),
        base=backoff_base(),
        cap=backoff_cap(),
    )


def _attempt_time(request: HttpRequest) -> datetime:
    at = getattr(request, "axes_attempt_time", None)
    return at if isinstance(at, datetime) else timezone.now()


def axes_failure_limit(request: HttpRequest | None, credentials: Any = None) -> int:
    """AXES_FAILURE_LIMIT: the same limit as `lockout_decide`'s, read when used (one setting)."""
    return failure_limit()


def cool_off(request: HttpRequest | None = None) -> timedelta:
    """AXES_COOLOFF_TIME: how long axes keeps a failure; the lock itself is `lockout_decide`'s."""
    return failure_memory()


class BackoffHandler(AxesDatabaseHandler):
    """axes' database handler, locking by `lockout_decide` and telling the owner (AXES_HANDLER)."""

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        username = login_username(request, credentials)
        if not username:
            return False
        decision = account_decision(username, now=_attempt_time(request))
        request.payops_lockout = decision  # type: ignore[attr-defined]
        return decision.locked

    def user_login_failed(
        self,
        sender: Any,
        credentials: dict[str, Any],
        request: HttpRequest | None = None,
        **kwargs: Any,
    ) -> None:
        # Refused by the lock (the backend flagged it before the password was even checked): axes
        # does not count it (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False), nor do we.
        refused = request is not None and bool(getattr(request, "axes_locked_out", False))
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is None or refused:
            return
        username = login_username(request, credentials)
        if not username:
            return
        decision = account_decision(username, now=_attempt_time(request))
        request.payops_lockout = decision  # type: ignore[attr-defined]
        if decision.failures >= notice_after():
            failures_notice(username=username, failures=decision.failures, request=request)


def failures_notice(*, username: str, failures: int, request: HttpRequest) -> bool:
    """Email the account's owner once about repeated failures (audited); False if not sent now.

    At most one notice per run of failures: none if one was recorded since the person last
    signed in and within the failure memory. The owner's row is locked while deciding, so two
    failures racing past the threshold send one mail between them.
    """
    at = _attempt_time(request)
    address = client_ip(request)
    with transaction.atomic():
        user = StaffUser.objects.select_for_update().filter(email=username, is_active=True).first()
        if user is None:
            return False  # no one to tell (and nothing said about whether the account exists)
        since = at - failure_memory()
        if user.last_login is not None and user.last_login > since:
            since = user.last_login
        already = AuditEntry.objects.filter(
            action=NOTICE_ACTION,
            target_type=user._meta.label_lower,
            target_id=str(user.pk),
            at__gte=since,
        ).exists()
        if already:
            return False
        record_action(
            actor=None,
            action=NOTICE_ACTION,
            target=user,
            details={"failures": failures, "ip": address, "at": at.isoformat()},
            announce=False,
        )
        email, language = user.email, user.language or settings.LANGUAGE_CODE
        transaction.on_commit(
            lambda: _send_notice(
                email=email, language=language, failures=failures, address=address, at=at
            )
        )
    return True


def _send_notice(*, email: str, language: str, failures: int, address: str, at: datetime) -> None:
    """The notice in the person's own language (the site's default when they chose none)."""
    when = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    with translation.override(language):
        subject = gettext("PayOps: repeated failed sign-ins to your account")
        body = gettext(
            "There have been %(failures)s failed sign-in attempts to your PayOps account, "
            "the latest at %(when)s from the address %(address)s.\n\n"
            "If that was you, wait for the lock to pass and sign in as usual. If it was not, "
            "tell an administrator: someone may be guessing your password. Sign-in stays "
            "possible for you once each wait has passed; the waits grow with every failure."
        ) % {"failures": failures, "when": when, "address": address or gettext("unknown")}
    try:
        send_mail(
            subject=subject,
            message=body,
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[email],
        )
    except Exception:  # a mail outage never breaks sign-in; the audit trail has the notice
        logger.exception("failed-sign-in notice could not be emailed")


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the locked page, saying when sign-in opens again (HTTP 429)."""
    username = login_username(request, credentials)
    decision = getattr(request, "payops_lockout", None)
    if not isinstance(decision, Decision) or not decision.locked:
        decision = account_decision(username, now=_attempt_time(request))
    context = {
        "username": username,
        "failure_limit": failure_limit(),
        "failures": decision.failures,
        "retry_at": decision.retry_at,
        "wait": (decision.retry_at - timezone.now()) if decision.retry_at else None,
    }
    return render(request, "staff/locked_out.html", context, status=429)
