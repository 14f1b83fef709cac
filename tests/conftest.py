"""Shared fixtures: tests that need PostgreSQL or Redis declare it with a marker."""

from __future__ import annotations

import os

import pytest
from django.conf import settings

REQUIRE_SERVICES = os.environ.get("PAYOPS_REQUIRE_SERVICES") == "1"


def _missing_service(name: str, why: str) -> None:
    message = f"{name} is required by this test but {why}"
    if REQUIRE_SERVICES:
        pytest.fail(message + " (PAYOPS_REQUIRE_SERVICES=1 makes this a failure)", pytrace=False)
    pytest.skip(message)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres") and settings.DATABASES["default"]["ENGINE"] != (
        "django.db.backends.postgresql"
    ):
        _missing_service("PostgreSQL", "DATABASE_URL does not point at PostgreSQL")
    if item.get_closest_marker("redis") and not settings.REDIS_URL:
        _missing_service("Redis", "REDIS_URL is not set")


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
