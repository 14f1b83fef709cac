"""The hash chain's cost on writing an audit entry (ADR 0019).

Prints `name=value`. `audit_chained_per_entry_ms` is `audit_record` as every service calls it
(lock, read the head, hash, insert, each entry its own transaction); the baseline is the same row
inserted without the chain (what audit_record did before: one INSERT). Interleaved, 3 rounds,
medians; `audit_chain_cost_ratio` is chained / baseline in the same run. Uses its own SQLite
file (or DATABASE_URL, where the advisory lock is real) and no emulator.

Hot paths that audit per event: applying a directory event (users.mirror, one entry per applied
event) and a payout status move (payouts.states, one per move, from events or polling; a poll
that finds no change writes none). Their added cost is this ratio on one INSERT each.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._support import environment, migrate

ROUNDS = 3
PER_ROUND = 300


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env["DJANGO_DEBUG"] = "false"
        migrate(env)
        os.environ.update(env)
        import django

        django.setup()
        run()


def run() -> None:
    from django.db import transaction

    from staff.audit import audit_record
    from staff.audit_chain import chain_verify
    from staff.models import AuditEntry

    details = {"status": "processing", "event_id": "evt_123", "amount": "100.00"}
    baseline_seq = 10**15  # far above the chain: these rows are removed after each round

    def chained() -> float:
        start = time.perf_counter()
        for _ in range(PER_ROUND):
            audit_record(actor=None, action="bench.chained", details=details)
        return (time.perf_counter() - start) * 1000 / PER_ROUND

    def baseline() -> float:
        nonlocal baseline_seq
        start = time.perf_counter()
        for _ in range(PER_ROUND):
            baseline_seq += 1
            with transaction.atomic():
                AuditEntry.objects.create(
                    action="bench.plain",
                    details=details,
                    seq=baseline_seq,
                    prev_hash="",
                    entry_hash="",
                )
        elapsed = (time.perf_counter() - start) * 1000 / PER_ROUND
        AuditEntry.objects.filter(action="bench.plain").delete()
        return elapsed

    chained_ms, baseline_ms = [], []
    for _ in range(ROUNDS):
        baseline_ms.append(baseline())
        chained_ms.append(chained())
    verify_start = time.perf_counter()
    report = chain_verify()
    verify_ms = (time.perf_counter() - verify_start) * 1000
    assert report.ok, report.broken
    chained_median = statistics.median(chained_ms)
    baseline_median = statistics.median(baseline_ms)
    print(f"audit_database={'postgresql' if os.environ.get('DATABASE_URL') else 'sqlite'}")
    print(f"audit_baseline_per_entry_ms={baseline_median:.3f}")
    print(f"audit_chained_per_entry_ms={chained_median:.3f}")
    print(f"audit_chain_cost_ratio={chained_median / baseline_median:.2f}")
    print(f"audit_verify_entries={report.checked}")
    print(f"audit_verify_per_1000_entries_ms={verify_ms * 1000 / max(report.checked, 1):.1f}")


if __name__ == "__main__":
    main()
