"""The analytics' figures at 100,000 payouts: each figure's queries and time.

Run: python bench/bench_analytics.py [--rows 100000] [--rounds 3]
Uses DATABASE_URL when set (PostgreSQL), otherwise a temporary SQLite file. It migrates, loads
`--rows` charged payouts over a month across three corridors (70% completed, 10% returned, 10%
failed, 10% in flight), each with its status changes, then times each figure `--rounds` times.
Prints `name=value`: `<figure>_queries` (also at 10 payouts: `<figure>_queries_10`) and
`<figure>_median_ms`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._support import environment, migrate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env["DJANGO_DEBUG"] = "false"
        migrate(env)
        os.environ.update(env)
        import django

        django.setup()
        run(args)


def load(count: int, state: dict) -> None:  # type: ignore[type-arg]
    import uuid

    from payouts.models import Payout, PayoutStatusChange

    statuses = ["completed"] * 7 + ["returned", "failed", "processing"]
    start = datetime(2026, 10, 1, tzinfo=UTC)
    payouts = []
    for n in range(count):
        charged = start + timedelta(minutes=(n * 37) % (30 * 24 * 60))
        payouts.append(
            Payout(
                environment=state["environment"],
                maker=state["maker"],
                virtual_account=state["account"],
                recipient=state["recipients"][n % 2],
                amount=Decimal("100.00") + n % 50,
                upstream_id=f"po-b-{state['serial'] + n}",
                idempotency_key=uuid.uuid4(),
                status=statuses[n % 10],
                charged_amount=Decimal("100.00") + n % 50,
                charged_total_fees=Decimal("2.50"),
                charged_total=Decimal("102.50") + n % 50,
                charged_recipient_amount=Decimal("1800.00"),
                charged_recipient_currency="MXN",
                charged_fees={"base_fees": {"fixed_fee": "1.00", "fx_markup": "0.005"}},
                charged_at=charged,
            )
        )
    state["serial"] += count
    created = Payout.objects.bulk_create(payouts, batch_size=2000)
    changes = []
    for n, payout in enumerate(created):
        at = payout.charged_at
        changes.append(
            PayoutStatusChange(
                payout=payout, from_status="", to_status="created", source="event", at=at
            )
        )
        if payout.status != "processing":
            first = "completed" if payout.status in ("completed", "returned") else "failed"
            changes.append(
                PayoutStatusChange(
                    payout=payout,
                    from_status="created",
                    to_status=first,
                    source="event",
                    at=at + timedelta(minutes=5 + n % 240),
                )
            )
        if payout.status == "returned":
            changes.append(
                PayoutStatusChange(
                    payout=payout,
                    from_status="completed",
                    to_status="returned",
                    source="event",
                    at=at + timedelta(days=1),
                )
            )
    PayoutStatusChange.objects.bulk_create(changes, batch_size=5000)


def run(args: argparse.Namespace) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from analytics import selectors
    from tests.finance import make_environment, make_recipient, make_staff, make_virtual_account

    environment = make_environment()
    maker = make_staff("finance_maker")
    account = make_virtual_account(environment)
    recipients = [
        make_recipient(environment, account.end_user, created_by=maker),
        make_recipient(
            environment,
            account.end_user,
            created_by=maker,
            country="MX",
            account_type="SWIFT",
            swift_code="BCMRMXMMPYM",
            bank_name="BBVA Mexico",
            account_number="012180001234567891",
        ),
    ]
    state = {
        "environment": environment,
        "maker": maker,
        "account": account,
        "recipients": recipients,
        "serial": 0,
    }
    period = selectors.Period(date(2026, 10, 1), date(2026, 10, 31), environment)
    figures = {
        "volume": selectors.volume,
        "outcomes": selectors.outcomes,
        "completion": selectors.completion_times,
        "fees": selectors.fees,
        "balances": selectors.balances,
    }

    def queries(figure) -> int:  # type: ignore[no-untyped-def]
        with CaptureQueriesContext(connection) as captured:
            figure(period=period, by=None)
        return len(captured)

    load(10, state)
    small = {name: queries(f) for name, f in figures.items()}
    started = time.perf_counter()
    load(args.rows - 10, state)
    print(f"load_s={time.perf_counter() - started:.1f}")
    for name, figure in figures.items():
        print(f"{name}_queries_10={small[name]}")
        print(f"{name}_queries={queries(figure)}")
        samples = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            figure(period=period, by=None)
            samples.append((time.perf_counter() - started) * 1000)
        print(f"{name}_median_ms={statistics.median(samples):.0f}")


if __name__ == "__main__":
    main()
