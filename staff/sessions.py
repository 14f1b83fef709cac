"""Session expiry: after an idle time (shorter for approvers and admins) and 8 hours after sign-in.

- `PAYOPS_SESSION_IDLE_MINUTES` (default 60): a session unused this long is signed out;
  `PAYOPS_SESSION_IDLE_MINUTES_PRIVILEGED` (default 15) for finance approvers, admins and
  superusers, who can move money or change who may.
- `PAYOPS_SESSION_MAX_HOURS` (default 8): signed out this long after signing in, however busy.

The sign-in time, the last activity and the idle limit are kept in the session (the idle limit is
decided at sign-in, from the person's roles then, so no request pays a query for it).
`session_expiry_middleware` checks them only when a request loads its user (lazily, like Django's
own middleware): the webhook receiver, static files and the health probes never load the session.
Last activity is written at most once a minute, so browsing does not save the session on every
request. An expired session is signed out, audited (`staff.session_expired` with the reason), and
the sign-in page says why; an HTMX request is answered with `HX-Redirect` to sign-in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.signals import user_logged_in
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from staff.actions import record_action  # no live page for these records: announce=False
from staff.roles import ADMIN, FINANCE_APPROVER

SIGNED_IN_AT_KEY = "payops_signed_in_at"
LAST_SEEN_KEY = "payops_last_seen_at"
IDLE_MINUTES_KEY = "payops_idle_minutes"
_EXPIRED_ATTRIBUTE = "_payops_session_expired"
# Last activity is written when it is at least this old: at most one session save a minute.
TOUCH_EVERY = timedelta(minutes=1)
PRIVILEGED_ROLES = (FINANCE_APPROVER.key, ADMIN.key)

type Reason = Literal["idle", "max_age"]


@dataclass(frozen=True)
class SessionCheck:
    reason: Reason | None  # None: still valid
    idle_minutes: int
    deadline: datetime  # when it expires unless there is activity first


def idle_minutes_for(user: Any) -> int:
    """The idle limit for a person: the short one if they may approve or administer."""
    privileged = bool(getattr(user, "is_superuser", False)) or (
        user.groups.filter(name__in=PRIVILEGED_ROLES).exists()
    )
    if privileged:
        return int(settings.PAYOPS_SESSION_IDLE_MINUTES_PRIVILEGED)
    return int(settings.PAYOPS_SESSION_IDLE_MINUTES)


def max_age() -> timedelta:
    return timedelta(hours=float(settings.PAYOPS_SESSION_MAX_HOURS))


def session_expiry(
    *, signed_in_at: datetime, last_seen_at: datetime, idle_minutes: int, now: datetime
) -> Reason | None:
    """Pure: why a session with these times has expired at `now`, or None if it has not."""
    if now - signed_in_at >= max_age():
        return "max_age"
    if now - last_seen_at >= timedelta(minutes=idle_minutes):
        return "idle"
    return None


def _read(session: Any, key: str) -> datetime | None:
    raw = session.get(key)
    if not isinstance(raw, str):
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return value if timezone.is_aware(value) else None


def on_logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """Start the clocks at sign-in (user_logged_in)."""
    if request is None or not hasattr(request, "session"):
        return
    now = timezone.now().isoformat()
    request.session[SIGNED_IN_AT_KEY] = now
    request.session[LAST_SEEN_KEY] = now
    request.session[IDLE_MINUTES_KEY] = idle_minutes_for(user)


def connect() -> None:
    user_logged_in.connect(on_logged_in, dispatch_uid="staff.sessions.logged_in")


MESSAGES: dict[Reason, str] = {
    "idle": "You were signed out after {minutes} minutes without activity. Sign in again.",
    "max_age": "You were signed out {hours} hours after signing in. Sign in again.",
}


def _expire(request: HttpRequest, user: Any, reason: Reason, idle_minutes: int) -> AnonymousUser:
    record_action(
        actor=user,
        action="staff.session_expired",
        details={"reason": reason, "idle_minutes": idle_minutes},
        announce=False,
    )
    # logout() reads request.user: give it the real user, not the lazy object being evaluated.
    request.user = user
    logout(request)
    hours = float(settings.PAYOPS_SESSION_MAX_HOURS)
    text = MESSAGES[reason].format(minutes=idle_minutes, hours=f"{hours:g}")
    messages.info(request, text, fail_silently=True)
    setattr(request, _EXPIRED_ATTRIBUTE, reason)
    return AnonymousUser()


def session_check(
    session: Any, user: Any, *, now: datetime | None = None, touch: bool = True
) -> SessionCheck:
    """Why `session` (of signed-in `user`) has expired, if it has, and when it will if not.

    Starts the clocks of a session from before this check existed, and (`touch`) records activity
    when the last record is a minute old; the caller saves the session (Django's middleware does).
    A websocket (re)connecting is not activity: console.consumers checks with `touch=False`.
    """
    now = now or timezone.now()
    signed_in_at = _read(session, SIGNED_IN_AT_KEY)
    if signed_in_at is None:  # a session from before this check existed: its clocks start now
        signed_in_at = now
        session[SIGNED_IN_AT_KEY] = now.isoformat()
        session[LAST_SEEN_KEY] = now.isoformat()
    last_seen_at = _read(session, LAST_SEEN_KEY) or signed_in_at
    idle_minutes = session.get(IDLE_MINUTES_KEY)
    if not isinstance(idle_minutes, int):
        idle_minutes = idle_minutes_for(user)
        session[IDLE_MINUTES_KEY] = idle_minutes
    reason = session_expiry(
        signed_in_at=signed_in_at, last_seen_at=last_seen_at, idle_minutes=idle_minutes, now=now
    )
    if touch and reason is None and now - last_seen_at >= TOUCH_EVERY:
        last_seen_at = now
        session[LAST_SEEN_KEY] = now.isoformat()
    deadline = min(signed_in_at + max_age(), last_seen_at + timedelta(minutes=idle_minutes))
    return SessionCheck(reason=reason, idle_minutes=idle_minutes, deadline=deadline)


def _checked(request: HttpRequest, user: Any) -> Any:
    if not getattr(user, "is_authenticated", False):
        return user
    check = session_check(request.session, user)
    if check.reason is not None:
        return _expire(request, user, check.reason, check.idle_minutes)
    return user


def session_expiry_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """After staff.middleware.proof_middleware: request.user, checked for expiry when loaded."""

    def middleware(request: HttpRequest) -> HttpResponse:
        loaded = request.user  # the lazy user from the middleware before; not evaluated here
        request.user = SimpleLazyObject(lambda: _checked(request, loaded))  # type: ignore[assignment]
        response = get_response(request)
        if getattr(request, _EXPIRED_ATTRIBUTE, None) and request.headers.get("HX-Request"):
            redirect = HttpResponse(status=204)
            redirect["HX-Redirect"] = resolve_url(settings.LOGIN_URL)
            return redirect
        return response

    return middleware
