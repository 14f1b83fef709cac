"""Status polling against the upstream's weekly budget, over a simulated week.

Run: python bench/bench_polling_budget.py. Uses DATABASE_URL when set, otherwise temporary SQLite
files. Starts the emulator (uvicorn, its own process) on a free port and seeds two environments,
each on its own API client with 1,000 open payouts spread over states (850 completed within the
30-day return window, 60 in review for up to 10 days, 90 on their way; `_polling_world.py`);
the second also holds 3,000 other, final payouts created in the last 30 days. Then the REAL
`payouts_poll()` runs every 5 simulated minutes for 7 simulated days: PayOps's clock
(`django.utils.timezone.now` and the model defaults that use it) and the emulator's
(`/_control/clock`) move together, and the emulator ticks, so that during the week 10 completed
payouts are returned and 30 payouts on their way complete upstream, with no webhook registered.
Nothing was polled before the run: the first passes carry the start-up backlog.

Upstream calls are counted from the gateway's call log (`payout_list` and `payout_get` rows: every
request the upstream counted, retries and token renewals included). Prints, for the first
environment and then with the `_crowded` suffix: polling_share_of_weekly_quota=<calls / 10,000>,
calls_per_day, busiest_day_calls, max_unpolled_<state>_minutes (the longest any open payout in
that state went unread, counted from the start of the run), returns_caught=<n>/<m>,
changes_caught, max_detection_minutes (from the upstream's change to PayOps showing it),
max_overdue_minutes_first_day / _after_first_day (the longest any payout stayed unread beyond
its own cadence: the first day carries the start-up backlog, read within the budget).
Goal: polling_share_of_weekly_quota <= 0.10 in both.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from _polling_world import SimClock, seed, upstream_world
from _support import django_setup, environment, free_port, migrate, start_emulator, wait_healthy

PASS = timedelta(minutes=5)  # the schedule's interval (payouts/apps.py)
# A shorter run (BENCH_POLLING_DAYS) scales its calls to a week; the figures are for 7 days.
DAYS = float(os.environ.get("BENCH_POLLING_DAYS", "7"))
WEEKLY_QUOTA = 10_000
POLL_OPERATIONS = ("payout_list", "payout_get")


def main() -> None:
    # Memory-backed when there is one: the run measures calls, not the disk's fsyncs.
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        env = environment(tmp)
        os.environ.update(env)
        migrate(env)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        # It logs a 401 for each token the simulated days expired: the gateway renews it.
        emulator = start_emulator(port, env)
        try:
            wait_healthy(url, emulator)
            run(url, env["EMULATOR_CONTROL_TOKEN"])
        finally:
            emulator.terminate()
            emulator.wait(timeout=60)


class Control:
    """The emulator's control API; keeps its clock in step with the simulated one."""

    def __init__(self, url: str, token: str) -> None:
        self.client = httpx.Client(
            base_url=f"{url}/_control", headers={"X-Emulator-Token": token}, timeout=30
        )
        self.offset = 0.0

    def __call__(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.client.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else {}

    def follow(self, moment: datetime) -> None:
        """Move the emulator's clock (real time + offset) to `moment`: forward only."""
        behind = (moment - datetime.now(UTC)).total_seconds() - self.offset
        if behind > 0:
            self.offset = self("POST", "clock", json={"advance_seconds": behind})["offset_seconds"]


class Staleness:
    """The longest time each open payout went unread, by the state it was in (5-minute steps)."""

    def __init__(self, start: datetime, environment_ids: list[int]) -> None:
        self.start = start
        self.ids = environment_ids
        self.worst: dict[tuple[int, str], timedelta] = defaultdict(timedelta)
        # Unread beyond its own cadence (the state's and age's), the first day apart: the
        # start-up backlog is read within the budget, oldest first.
        self.overdue: dict[tuple[int, bool], timedelta] = defaultdict(timedelta)
        self.payouts: dict[int, tuple[int, str, datetime, datetime]] = {}
        self._read(since=None)

    def _read(self, since: datetime | None) -> None:
        """What polling (or a change) wrote since `since`: every payout the first time."""
        from django.db.models import Q

        from payouts.models import Payout

        rows = Payout.objects.filter(environment_id__in=self.ids)
        if since is not None:
            rows = rows.filter(Q(last_polled_at__gte=since) | Q(updated_at__gte=since))
        for pk, env, status, polled, updated in rows.values_list(
            "pk", "environment_id", "status", "last_polled_at", "updated_at"
        ):
            read = max(moment for moment in (polled, updated, self.start) if moment is not None)
            self.payouts[pk] = (env, status, read, updated)

    def sample(self, now: datetime) -> None:
        from payouts.tracking.polling.due import Rules, cadence
        from payouts.tracking.polling.run import TRACKED

        rules = Rules()
        self._read(since=now)
        watch_from = now - timedelta(days=30)
        for env, status, read, updated in self.payouts.values():
            if status in TRACKED and not (status == "completed" and updated < watch_from):
                key = (env, status)
                unread = now - read
                self.worst[key] = max(self.worst[key], unread)
                every = cadence(status, now - updated, rules) or unread
                day = (now - self.start) // timedelta(days=1)
                self.overdue[(env, day >= 1)] = max(self.overdue[(env, day >= 1)], unread - every)


def run(url: str, token: str) -> None:
    django_setup()
    from django.conf import settings
    from django.core.cache import cache

    from payouts.tracking.polling.run import payouts_poll
    from staff.models import StaffUser
    from staff.roles import roles_sync

    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    control = Control(url, token)
    start = datetime.now(UTC).replace(microsecond=0)
    # The cache keeps real time for its expiries: its backend imports `now` when first used.
    cache.get("bench:polling")
    clock = SimClock(start)
    clock.install()
    roles_sync()
    maker = StaffUser.objects.create_user("maker@bench.test", "not-used-pw-123")
    rng = random.Random(17)
    seeded = {}
    for name, crowded in (("", False), ("_crowded", True)):
        context = upstream_world(url, control, name=f"bench-polling{name}", maker=maker)
        seeded[name] = seed(context, start=start, crowded=crowded, rng=rng)
    ids = [s.environment.pk for s in seeded.values()]
    staleness = Staleness(start, ids)
    began = time.monotonic()
    for step in range(int(timedelta(days=DAYS) / PASS)):
        clock.now = start + step * PASS
        control.follow(clock.now)
        control("POST", "tick")
        payouts_poll()
        staleness.sample(clock.now)
        if step % (288 * 2) == 0:
            print(f"# day {step // 288} after {time.monotonic() - began:.0f} s", file=sys.stderr)
    for name, world in seeded.items():
        report(name, world, staleness, start=start)


def report(suffix: str, world: Any, staleness: Staleness, *, start: datetime) -> None:
    from gateway.models import UpstreamCall

    env = world.environment
    calls = UpstreamCall.objects.filter(environment=env, operation__in=POLL_OPERATIONS)
    per_day: dict[int, int] = defaultdict(int)
    for created_at in calls.values_list("created_at", flat=True):
        per_day[(created_at - start) // timedelta(days=1)] += 1
    total = sum(per_day.values())
    print(f"polling_share_of_weekly_quota{suffix}={total * 7 / DAYS / WEEKLY_QUOTA:.4f}")
    print(f"calls_per_day{suffix}={total / DAYS:.1f}")
    print(f"busiest_day_calls{suffix}={max(per_day.values(), default=0)}")
    for (environment_id, status), gap in sorted(staleness.worst.items()):
        if environment_id == env.pk:
            print(f"max_unpolled_{status}_minutes{suffix}={gap.total_seconds() / 60:.0f}")
    for after_day_one, name in ((False, "first_day"), (True, "after_first_day")):
        late = staleness.overdue[(env.pk, after_day_one)].total_seconds() / 60
        print(f"max_overdue_minutes_{name}{suffix}={late:.0f}")
    caught, expected, detection = detections(world)
    returns = sum(1 for upstream_id in world.returns if upstream_id in caught)
    print(f"returns_caught{suffix}={returns}/{len(world.returns)}")
    print(f"changes_caught{suffix}={len(caught)}/{expected}")
    print(f"max_detection_minutes{suffix}={detection:.0f}")


def detections(world: Any) -> tuple[set[str], int, float]:
    """Which upstream changes of the week PayOps shows, and the longest it took to see one."""
    from emulator.models import Payout as UpstreamPayout
    from payouts.models import Payout, PayoutStatusChange

    wanted = {**world.returns, **world.moves}
    upstream_at = {}
    for payout_id, status, events in UpstreamPayout.objects.filter(
        payout_id__in=list(wanted)
    ).values_list("payout_id", "status", "events"):
        if status in ("COMPLETED", "FAILED") and str(payout_id) in wanted:
            upstream_at[str(payout_id)] = datetime.fromisoformat(events[-1]["at"])
    seen = {
        upstream_id: at
        for upstream_id, at in PayoutStatusChange.objects.filter(
            payout__environment=world.environment,
            payout__upstream_id__in=list(upstream_at),
            to_status__in=("completed", "returned"),
            source="poll",
        ).values_list("payout__upstream_id", "at")
    }
    caught = {
        upstream_id
        for upstream_id in seen
        if Payout.objects.filter(environment=world.environment, upstream_id=upstream_id)
        .exclude(status__in=("pending", "processing", "in_review"))
        .exists()
    }
    worst = max(((seen[u] - upstream_at[u]).total_seconds() / 60 for u in caught), default=0.0)
    return caught, len(upstream_at), worst


if __name__ == "__main__":
    main()
