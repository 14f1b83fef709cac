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
