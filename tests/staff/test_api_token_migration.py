"""Migration staff.0003: tokens made before scopes existed become read + prepare, expiring 30 days
after the migration ran (docs/staff.md, CHANGELOG)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("staff", "0002_apitoken")]
AFTER = [("staff", "0003_apitoken_scopes_expiry")]


@pytest.mark.django_db(transaction=True)
def test_existing_tokens_become_read_prepare_for_30_days() -> None:
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
