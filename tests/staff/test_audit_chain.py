"""The audit trail's hash chain (issue 20 item 4, ADR 0019): every entry chained to the one
before it; a raw UPDATE of one row, or a deleted row, is found and named by the command, the
page and the API; before/after are stored redacted."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from staff.audit import audit_record
from staff.audit_chain import GENESIS_HASH, chain_verify, entry_hash_of, fields_of
from staff.models import AuditEntry, StaffUser
from staff.redaction import REDACTED

pytestmark = pytest.mark.django_db


def _trail(n: int = 5) -> list[AuditEntry]:
    actor = StaffUser.objects.create_user("chain@payops.local", "x")
    return [
        audit_record(
            actor=actor,
            action="test.changed",
            target=actor,
            details={"n": i, "amount": Decimal("1.50"), "ratio": 2.0},
            before={"status": "draft"},
            after={"status": f"step-{i}"},
        )
        for i in range(n)
    ]


def _raw_update(sql: str, params: list[object]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_entries_are_numbered_and_each_points_at_the_previous_hash() -> None:
    entries = _trail(3)
    assert [e.seq for e in entries] == [1, 2, 3]
    assert entries[0].prev_hash == GENESIS_HASH
    assert entries[1].prev_hash == entries[0].entry_hash
    assert entries[2].prev_hash == entries[1].entry_hash
    # The stored row (JSON as the database gives it back) hashes to what was chained.
    for entry in entries:
        entry.refresh_from_db()
        assert entry_hash_of(fields_of(entry)) == entry.entry_hash
    report = chain_verify()
    assert report.ok and report.checked == 3 and report.head_hash == entries[2].entry_hash


def test_before_and_after_are_kept_and_redacted_like_details() -> None:
    entry = audit_record(
        actor=None,
        action="gateway.environment_updated",
        before={"base_url": "https://a", "password": "old-secret"},
        after={"base_url": "https://b", "password": "new-secret"},
    )
    entry.refresh_from_db()
    assert entry.before == {"base_url": "https://a", "password": REDACTED}
    assert entry.after == {"base_url": "https://b", "password": REDACTED}
    assert chain_verify().ok


def test_editing_one_row_with_a_raw_update_is_named() -> None:
    entries = _trail()
    victim = entries[2]
    _raw_update("UPDATE staff_auditentry SET details = %s WHERE id = %s", ['{"n": 99}', victim.pk])
    report = chain_verify()
    assert not report.ok
    assert report.broken is not None
    assert (report.broken.entry_id, report.broken.seq) == (victim.pk, 3)
    assert "contents changed" in report.broken.problem
    assert report.checked == 2


def test_rewriting_a_row_and_its_hash_is_named_at_the_next_entry() -> None:
    entries = _trail()
    victim = entries[1]
    victim.action = "test.innocent"
    forged = entry_hash_of(fields_of(victim))
    _raw_update(
        "UPDATE staff_auditentry SET action = %s, entry_hash = %s WHERE id = %s",
        ["test.innocent", forged, victim.pk],
    )
    report = chain_verify()
    assert report.broken is not None
    assert report.broken.entry_id == entries[2].pk
    assert "prev_hash" in report.broken.problem


def test_moving_an_entry_in_time_is_named() -> None:
    entries = _trail()
    AuditEntry.objects.filter(pk=entries[0].pk).update(at=entries[0].at - timedelta(days=1))
    report = chain_verify()
    assert report.broken is not None and report.broken.entry_id == entries[0].pk


def test_deleting_a_row_is_detected() -> None:
    entries = _trail()
    _raw_update("DELETE FROM staff_auditentry WHERE id = %s", [entries[2].pk])
    report = chain_verify()
    assert report.broken is not None
    assert report.broken.entry_id == entries[3].pk
    assert "missing (seq 3" in report.broken.problem


def test_the_command_says_intact_or_names_the_broken_link() -> None:
    entries = _trail()
    call_command("audit_verify")  # no error: intact
    _raw_update("UPDATE staff_auditentry SET target_id = %s WHERE id = %s", ["999", entries[4].pk])
    with pytest.raises(CommandError) as refused:
        call_command("audit_verify")
    assert f"entry {entries[4].pk} (seq 5)" in str(refused.value)
    assert refused.value.returncode == 1


def test_a_seq_taken_twice_is_refused_rather_than_forking_the_chain() -> None:
    from django.db import IntegrityError, transaction

    first = _trail(1)[0]
    fields = {name: getattr(first, name) for name in ("action", "target_type", "target_id")}
    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEntry.objects.create(
            **fields, seq=first.seq, prev_hash=GENESIS_HASH, entry_hash="f" * 64
        )
