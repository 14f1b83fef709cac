"""Writers racing to append to the audit trail never fork the chain (ADR 0019): on PostgreSQL the
advisory lock serialises them until each commits; SQLite's IMMEDIATE transactions do the same."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from staff.audit import audit_record
from staff.audit_chain import chain_verify
from staff.models import AuditEntry

WRITERS = 4
EACH = 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_leave_one_unbroken_chain() -> None:
    start = threading.Barrier(WRITERS)
    failures: list[BaseException] = []

    def write(n: int) -> None:
        try:
            start.wait()
            for i in range(EACH):
                with transaction.atomic():
                    audit_record(actor=None, action="test.race", details={"writer": n, "i": i})
                    # More work in the same transaction, as a service does after its entry.
                    AuditEntry.objects.filter(action="test.race").count()
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    seqs = list(AuditEntry.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert AuditEntry.objects.filter(action="test.race").count() == WRITERS * EACH
    report = chain_verify()
    assert report.ok, report.broken
