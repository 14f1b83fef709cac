"""Shared fixtures: service markers (PostgreSQL, Redis) and staff users with their roles."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

REQUIRE_SERVICES = os.environ.get("PAYOPS_REQUIRE_SERVICES") == "1"


def _missing_service(name: str, why: str) -> None:
    message = f"{name} is required by this test but {why}"
    if REQUIRE_SERVICES:
        pytest.fail(message + " (PAYOPS_REQUIRE_SERVICES=1 makes this a failure)", pytrace=False)
    pytest.skip(message)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres") and connection.vendor != "postgresql":
        _missing_service("PostgreSQL", "DATABASE_URL does not point at PostgreSQL")
    if item.get_closest_marker("redis") and not settings.REDIS_URL:
        _missing_service("Redis", "REDIS_URL is not set")


@pytest.fixture(autouse=True)
def _default_language_after_each_test() -> Iterator[None]:
    """A request in another language (a person's own, Accept-Language) leaves that language
    active in the test's thread: LocaleMiddleware activates it and nothing deactivates it. The
    next test in the same worker would then format money and dates in Spanish; each test starts
    from the default instead."""
    from django.utils import translation

    yield
    translation.deactivate()


@pytest.fixture
def demo_staff(db: None) -> dict[str, Any]:
    """One demo user per role, keyed by role key, made the way payops_bootstrap makes them."""
    from staff.bootstrap import seed_demo_staff
    from staff.roles import roles_sync

    roles_sync()
    return {user.groups.get().name: user for user in seed_demo_staff()}


@pytest.fixture
def client_for(demo_staff: dict[str, Any]) -> Callable[[str], Client]:
    """A client signed in as the demo user of a role, second factor passed (tests/identity.py)."""
    from tests.identity import client_signed_in

    def make(role_key: str) -> Client:
        return client_signed_in(demo_staff[role_key])

    return make


@pytest.fixture
def outbox_layer(settings: Any) -> None:
    """The embedded default's channel layer (ADR 0012) even when REDIS_URL configures Redis: the
    tests of the outbox test it whatever services the run has."""
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "console.live.layer.OutboxChannelLayer", "CONFIG": {}}
    }


@pytest.fixture
def roles_synced(transactional_db: None) -> None:
    from staff.roles import roles_sync

    roles_sync()


@pytest.fixture
def maker(roles_synced: None):  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Group

    from staff.models import StaffUser

    user = StaffUser.objects.create_user("maker-ops@example.test", "pw-ops-12345")
    user.groups.add(Group.objects.get(name="finance_maker"))
    return user


@pytest.fixture
def roleless(transactional_db: None):  # type: ignore[no-untyped-def]
    from staff.models import StaffUser

    return StaffUser.objects.create_user("nobody-ops@example.test", "pw-ops-12345")


DB_FIXTURES = {"db", "transactional_db", "live_server"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every database test may touch both aliases: the back office's and the emulator's own.

    Emulator fixtures are shared widely (a live emulator behind gateway, ops and browser tests);
    naming the databases once here keeps each test free of a detail of where the emulator's
    tables live, and makes transactional tests flush both.
    """
    for item in items:
        marker = item.get_closest_marker("django_db")
        if marker is None and not DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            continue
        if marker is not None and marker.kwargs.get("databases") is not None:
            continue
        kwargs = {**(marker.kwargs if marker else {}), "databases": "__all__"}
        item.add_marker(pytest.mark.django_db(*(marker.args if marker else ()), **kwargs), False)
