"""Migrations staff.0005/0006: audit entries written before the chain existed are chained in id
order, so the whole trail verifies from its first entry (ADR 0019)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from staff.audit_chain import GENESIS_HASH, chain_verify
from staff.models import AuditEntry

BEFORE = [("staff", "0007_admin_change_proposals")]
AFTER = [("staff", "0009_audit_seq_unique_indexes")]


@pytest.mark.django_db(transaction=True)
def test_existing_entries_are_chained_in_id_order() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("staff", "StaffUser").objects.create(email="old@payops.test")
    Entry = old.get_model("staff", "AuditEntry")
    ids = [
        Entry.objects.create(actor=user, action=f"old.{i}", details={"i": i, "x": 1.0}).pk
        for i in range(3)
    ]

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the rest of the project, as before

    rows = list(AuditEntry.objects.filter(pk__in=ids).order_by("seq"))
    assert [row.pk for row in rows] == ids
    assert rows[0].prev_hash == GENESIS_HASH
    assert rows[1].prev_hash == rows[0].entry_hash
    report = chain_verify()
    assert report.ok and report.checked == AuditEntry.objects.count()
