"""Per-API-key limits: rate and concurrency (in memory), weekly quota (database)."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction

from emulator import clock
from emulator.database import EMULATOR_DB
from emulator.models import ApiClient, WeeklyUsage

WINDOW_SECONDS = 1.0


@dataclass
class Decision:
    """The limiter's answer: whether the request runs, and the RateLimit-* headers to send."""

    admitted: bool
    limit: int
    remaining: int
    reset: int
    retry_after: int | None = None
    reason: str = ""

    def headers(self) -> dict[str, str]:
        headers = {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(max(self.remaining, 0)),
            "RateLimit-Reset": str(max(self.reset, 0)),
        }
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        return headers


@dataclass
class _KeyState:
    window: deque[float] = field(default_factory=deque)
    in_flight: int = 0
    peak_in_flight: int = 0
    peak_window: int = 0
    admitted: int = 0


class RateLimiter:
    """Sliding one-second window plus an in-flight counter per key, under one threading lock.

    The emulator is one process, but its sync code runs in several threads (Django's per-request
    threads, the wrapper's executor), so every read-modify-write happens under the lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, _KeyState] = {}

    def acquire(self, key: str, *, rate: int, max_concurrent: int) -> Decision:
        now = time.monotonic()
        with self._lock:
            state = self._keys.setdefault(key, _KeyState())
            window = state.window
            while window and window[0] <= now - WINDOW_SECONDS:
                window.popleft()
            reset = math.ceil(window[0] + WINDOW_SECONDS - now) if window else 1
            if len(window) >= rate:
                retry = max(1, math.ceil(window[0] + WINDOW_SECONDS - now))
                return Decision(False, rate, 0, retry, retry, "rate")
            if state.in_flight >= max_concurrent:
                return Decision(False, rate, rate - len(window), reset, 1, "concurrency")
            window.append(now)
            state.in_flight += 1
            state.admitted += 1
            state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
            state.peak_window = max(state.peak_window, len(window))
            return Decision(True, rate, rate - len(window), max(reset, 1))

    def release(self, key: str) -> None:
        with self._lock:
            state = self._keys.get(key)
            if state is not None and state.in_flight > 0:
                state.in_flight -= 1

    def peak_in_flight(self, key: str) -> int:
        """Most requests of this key ever in flight at once (a statistic, used by the tests)."""
        with self._lock:
            state = self._keys.get(key)
            return state.peak_in_flight if state else 0

    def peak_window(self, key: str) -> int:
        """Most requests of this key ever admitted within one window (a statistic, for tests)."""
        with self._lock:
            state = self._keys.get(key)
            return state.peak_window if state else 0

    def reset(self) -> None:
        with self._lock:
            self._keys.clear()


LIMITER = RateLimiter()


def client_key(client: ApiClient) -> str:
    return f"client:{client.pk}"


def iso_week(at: datetime) -> str:
    year, week, _ = at.isocalendar()
    return f"{year}-W{week:02d}"


def seconds_to_next_week(at: datetime) -> int:
    monday = (at - timedelta(days=at.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, math.ceil((monday + timedelta(days=7) - at).total_seconds()))


class WeeklyCounter:
    """Requests per client and ISO week, counted in memory under a lock and written behind to
    `WeeklyUsage` (at most once per FLUSH_SECONDS per client, at once when the quota is reached,
    and by the periodic `flush()`), so a request costs no database write for the quota.

    A restart loses at most the last FLUSH_SECONDS of counts; the emulator is one process."""

    FLUSH_SECONDS = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[int, str], int] = {}
        self._flushed: dict[tuple[int, str], tuple[int, float]] = {}

    def take(self, client: ApiClient, week: str, quota: int) -> int | None:
        """Counts one request; the new count, or None (not counted) when the quota is spent."""
        key = (client.pk, week)
        with self._lock:
            loaded = key in self._counts
        if not loaded:
            stored = (
                WeeklyUsage.objects.filter(client=client, week=week)
                .values_list("count", flat=True)
                .first()
            )
            with self._lock:
                self._counts.setdefault(key, int(stored or 0))
        with self._lock:
            count = self._counts[key]
            if count >= quota:
                return None
            count += 1
            self._counts[key] = count
            flushed_at = self._flushed.get(key, (0, 0.0))[1]
            due = count >= quota or time.monotonic() - flushed_at >= self.FLUSH_SECONDS
            if due:
                self._flushed[key] = (count, time.monotonic())
        if due:
            _store(client.pk, week, count)
        return count

    def flush(self) -> None:
        """Writes every count not yet stored (a PERIODIC_JOBS entry)."""
        with self._lock:
            pending = [
                (key, count)
                for key, count in self._counts.items()
                if self._flushed.get(key, (0, 0.0))[0] != count
            ]
            now = time.monotonic()
            for key, count in pending:
                self._flushed[key] = (count, now)
        for (client_pk, week), count in pending:
            _store(client_pk, week, count)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._flushed.clear()


def _store(client_pk: int, week: str, count: int) -> None:
    # Only ever raises the stored count, so writers finishing out of order cannot lower it.
    updated = WeeklyUsage.objects.filter(client_id=client_pk, week=week, count__lt=count).update(
        count=count
    )
    if not updated:
        with transaction.atomic(using=EMULATOR_DB):
            WeeklyUsage.objects.get_or_create(
                client_id=client_pk, week=week, defaults={"count": count}
            )


WEEKLY = WeeklyCounter()


def flush_weekly_usage() -> None:
    WEEKLY.flush()


def weekly_quota_take(client: ApiClient) -> Decision:
    """Counts one request against this ISO week's quota (emulator clock); refused when spent."""
    now = clock.now()
    week = iso_week(now)
    quota = client.effective_weekly_quota
    reset = seconds_to_next_week(now)
    count = WEEKLY.take(client, week, quota)
    if count is None:
        return Decision(False, quota, 0, reset, reset, "quota")
    return Decision(True, quota, quota - count, reset)


def admit(client: ApiClient | None, anonymous_key: str) -> tuple[str, Decision]:
    """Applies every limit; returns the limiter key (to release) and the decision whose window
    is the tighter one, for the RateLimit-* headers."""
    from django.conf import settings

    if client is None:
        key = anonymous_key
        rate = int(settings.EMULATOR_RATE_PER_SECOND)
        concurrent = int(settings.EMULATOR_MAX_CONCURRENT)
    else:
        key = client_key(client)
        rate = client.effective_rate_per_second
        concurrent = client.effective_max_concurrent
    decision = LIMITER.acquire(key, rate=rate, max_concurrent=concurrent)
    if not decision.admitted or client is None:
        return key, decision
    weekly = weekly_quota_take(client)
    if not weekly.admitted:
        LIMITER.release(key)
        return key, weekly
    return key, weekly if weekly.remaining < decision.remaining else decision
