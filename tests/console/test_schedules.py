"""Schedules as code: sync_schedules creates, updates and deletes the django_q rows it owns."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django_q.models import Schedule

from console import schedules
from console.schedules import SCHEDULES, register_schedule, schedules_sync
from console.tasks import heartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict[str, schedules.ScheduleSpec]:
    """A copy of the registry, so a test's declarations don't leak into others."""
    copy = dict(SCHEDULES)
    monkeypatch.setattr(schedules, "SCHEDULES", copy)
    return copy


def test_the_heartbeat_is_declared_every_minute() -> None:
    spec = SCHEDULES["console.heartbeat"]
    assert spec.func == "console.tasks.heartbeat"
    assert spec.schedule_type == Schedule.MINUTES
    assert spec.minutes == 1


def test_sync_schedules_command_creates_each_declared_schedule() -> None:
    out = StringIO()
    call_command("sync_schedules", stdout=out)

    row = Schedule.objects.get(name="payops:console.heartbeat")
    assert row.func == "console.tasks.heartbeat"
    assert row.schedule_type == Schedule.MINUTES
    assert row.minutes == 1
    assert row.repeats == -1
    assert row.next_run is not None
    assert "created   payops:console.heartbeat" in out.getvalue()


def test_sync_is_idempotent() -> None:
    schedules_sync()
    result = schedules_sync()

    assert result.created == result.updated == result.deleted == []
    assert "payops:console.heartbeat" in result.unchanged
    assert Schedule.objects.filter(name="payops:console.heartbeat").count() == 1


def test_sync_updates_a_changed_declaration_and_keeps_the_row(registry) -> None:
    register_schedule("ops.test", heartbeat, minutes=5, kwargs={"a": 1})
    schedules_sync()
    row_id = Schedule.objects.get(name="payops:ops.test").pk

    register_schedule("ops.test", heartbeat, every="hourly", args=(1, "x"))
    result = schedules_sync()

    row = Schedule.objects.get(name="payops:ops.test")
    assert result.updated == ["payops:ops.test"]
    assert row.pk == row_id
    assert row.schedule_type == Schedule.HOURLY
    assert row.minutes is None
    assert row.args == "(1, 'x')"
    assert row.kwargs is None


def test_sync_deletes_owned_schedules_no_longer_declared_but_not_foreign_ones(registry) -> None:
    register_schedule("ops.gone", heartbeat, minutes=10)
    schedules_sync()
    Schedule.objects.create(
        name="made by hand", func="console.tasks.heartbeat", schedule_type=Schedule.DAILY
    )
    del registry["ops.gone"]

    result = schedules_sync()

    assert result.deleted == ["payops:ops.gone"]
    assert not Schedule.objects.filter(name="payops:ops.gone").exists()
    assert Schedule.objects.filter(name="made by hand").exists()


@pytest.mark.parametrize(
    ("name", "func", "options"),
    [
        ("payops:x", heartbeat, {"minutes": 1}),
        # Only a module-level function can be stored as a path a worker imports.
        ("x", lambda: None, {"minutes": 1}),
        ("x", heartbeat, {}),
        ("x", heartbeat, {"minutes": 1, "every": "daily"}),
        ("x", heartbeat, {"minutes": 0}),
        ("x", heartbeat, {"every": "fortnightly"}),
    ],
)
def test_invalid_declarations_are_refused(registry, name, func, options) -> None:
    with pytest.raises(ImproperlyConfigured):
        register_schedule(name, func, **options)
    assert "x" not in registry
