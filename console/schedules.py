"""Schedules as code: apps register django-q2 schedules; `manage.py sync_schedules` applies them.

How to add a schedule from another app: in its AppConfig.ready(),

    from console.schedules import register_schedule
    from gateway.tasks import refresh_upstream_tokens
    register_schedule("gateway.refresh_tokens", refresh_upstream_tokens, minutes=5)

The function is passed itself, so a reader (or a tool) follows the seam; django-q2 stores a
schedule's function as a dotted path, which this registry derives and checks once.

The name is stored with the `payops:` prefix, which marks the django_q Schedule rows this registry
owns: sync_schedules creates or updates each declared one by name and deletes owned rows that are
no longer declared, and never touches schedules created by hand (without the prefix).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone
from django_q.conf import croniter
from django_q.models import Schedule

PREFIX = "payops:"

# The schedule types that need no extra package (cron needs croniter, which is not installed).
_EVERY = {
    "minutes": Schedule.MINUTES,
    "hourly": Schedule.HOURLY,
    "daily": Schedule.DAILY,
    "weekly": Schedule.WEEKLY,
}


@dataclass(frozen=True)
class ScheduleSpec:
    """One declared schedule: what to run (a dotted function path) and when."""

    name: str
    func: str
    schedule_type: str
    minutes: int | None = None
    cron: str | None = None
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def stored_name(self) -> str:
        return PREFIX + self.name

    def fields(self) -> dict[str, Any]:
        """The django_q Schedule fields this spec decides (args/kwargs as django-q stores them)."""
        return {
            "func": self.func,
            "schedule_type": self.schedule_type,
            "minutes": self.minutes,
            "cron": self.cron,
            "args": repr(self.args) if self.args else None,
            "kwargs": repr(self.kwargs) if self.kwargs else None,
            "repeats": -1,
        }


SCHEDULES: dict[str, ScheduleSpec] = {}


def task_path(func: Callable[..., Any]) -> str:
    """The dotted path django-q2 stores for a module-level function (it cannot store others)."""
    module, qualname = getattr(func, "__module__", None), getattr(func, "__qualname__", "")
    if not module or not qualname or "." in qualname or "<" in qualname:
        raise ImproperlyConfigured(f"{func!r} is not a module-level function a worker can import.")
    return f"{module}.{qualname}"


def register_schedule(
    name: str,
    func: Callable[..., Any],
    *,
    minutes: int | None = None,
    every: str | None = None,
    cron: str | None = None,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
) -> ScheduleSpec:
    """Declare (or replace, by name) a schedule: `minutes`, `every` (hourly/daily/weekly), cron."""
    if name.startswith(PREFIX):
        raise ImproperlyConfigured(f"Schedule names are given without the {PREFIX!r} prefix.")
    path = task_path(func)
    chosen = [option for option in (minutes, every, cron) if option is not None]
    if len(chosen) != 1:
        raise ImproperlyConfigured(f"Schedule {name!r}: give exactly one of minutes, every, cron.")
    if minutes is not None:
        if minutes < 1:
            raise ImproperlyConfigured(f"Schedule {name!r}: minutes must be at least 1.")
        schedule_type = Schedule.MINUTES
    elif every is not None:
        if every not in _EVERY or every == "minutes":
            raise ImproperlyConfigured(f"Schedule {name!r}: every must be hourly, daily or weekly.")
        schedule_type = _EVERY[every]
    else:
        if not croniter:
            raise ImproperlyConfigured(
                f"Schedule {name!r} uses cron, which needs the croniter package (not installed)."
            )
        schedule_type = Schedule.CRON
    spec = ScheduleSpec(
        name=name,
        func=path,
        schedule_type=schedule_type,
        minutes=minutes,
        cron=cron,
        args=args,
        kwargs=dict(kwargs or {}),
    )
    SCHEDULES[name] = spec
    return spec


@dataclass
class SyncResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def schedules_sync(*, specs: dict[str, ScheduleSpec] | None = None) -> SyncResult:
    """Make the owned django_q Schedule rows match the declared specs, in one transaction."""
    declared = {spec.stored_name: spec for spec in (SCHEDULES if specs is None else specs).values()}
    result = SyncResult()
    now = timezone.now()
    with transaction.atomic():
        existing = {
            row.name: row
            for row in Schedule.objects.select_for_update().filter(name__startswith=PREFIX)
        }
        for stored_name, spec in sorted(declared.items()):
            wanted = spec.fields()
            row = existing.get(stored_name)
            if row is None:
                Schedule.objects.create(name=stored_name, next_run=now, **wanted)
                result.created.append(stored_name)
                continue
            changed = {key for key, value in wanted.items() if getattr(row, key) != value}
            if not changed:
                result.unchanged.append(stored_name)
                continue
            for key in changed:
                setattr(row, key, wanted[key])
            if changed & {"schedule_type", "minutes", "cron"}:
                # A new rhythm starts now rather than waiting out the old interval.
                row.next_run = now
            row.save()
            result.updated.append(stored_name)
        for stored_name, row in sorted(existing.items()):
            if stored_name not in declared:
                row.delete()
                result.deleted.append(stored_name)
    return result


def register_console_schedules() -> None:
    """The console's own schedules (called from its AppConfig.ready())."""
    from console.tasks import heartbeat, live_messages_prune

    # The worker's heartbeat: proves to /readyz that a qcluster is running tasks.
    register_schedule("console.heartbeat", heartbeat, minutes=1)
    # The live outbox (ADR 0012) keeps minutes of messages; with Redis it stays empty and is free.
    register_schedule("console.live_prune", live_messages_prune, minutes=1)
