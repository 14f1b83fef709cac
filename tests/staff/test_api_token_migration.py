"""Migration staff.0003: tokens made before scopes existed become read + prepare, expiring 30 days
after the migration ran (docs/staff.md, CHANGELOG)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("staff", "0002_apitoken")]
AFTER = [("staff", "0003_apitoken_scopes_expiry")]


@pytest.fixture
def back_to_latest() -> Iterator[None]:
    """Whatever the test migrated to, the database ends at the latest migrations again."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_existing_tokens_become_read_prepare_for_30_days(back_to_latest: None) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("staff", "StaffUser").objects.create(email="old@payops.test")
    old.get_model("staff", "ApiToken").objects.create(
        user=user, name="erp", prefix="payops_abcde", token_hash="0" * 64
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    token = new.get_model("staff", "ApiToken").objects.get()
    assert token.scopes == ["read", "prepare"]
    left = token.expires_at - timezone.now()
    assert timedelta(days=29, hours=23) < left <= timedelta(days=30)
    assert token.stepped_up_at is None
