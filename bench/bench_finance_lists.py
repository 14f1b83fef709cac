"""Cost of the finance lists: queries per page for 1 vs 50 rows, and the streamed CSV export.

Run: python bench/bench_finance_lists.py. Uses DATABASE_URL when set, otherwise a temporary SQLite
file; migrates it, creates ROWS payout drafts, then prints payout_list_queries_1,
payout_list_queries_50, quote_list_queries, payout_search_{amount,recipient}_{queries,ms} (the
list searched over all ROWS), csv_export_rows, csv_export_seconds and csv_export_peak_kib (Python
allocations while streaming: bounded by the chunk, not the rows)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
import tracemalloc

from _support import django_setup, environment, migrate

ROWS = int(os.environ.get("BENCH_ROWS", "5000"))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        migrate(env)
        os.environ.update(env)
        django_setup()
        run()


def run() -> None:
    from decimal import Decimal

    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from gateway.services.environments import environment_switch
    from payouts.models import Payout
    from tests.finance import make_draft, make_environment, make_staff

    settings.ALLOWED_HOSTS = ["*"]
    environment = make_environment("Bench sandbox")
    maker = make_staff("finance_maker")
    environment_switch(user=maker, environment=environment)
    first = make_draft(maker=maker, environment=environment)
    client = Client()
    client.force_login(maker)

    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    print(f"payout_list_queries_1={queries('/payouts/')}")
    Payout.objects.bulk_create(
        Payout(
            environment=environment,
            maker=maker,
            virtual_account=first.virtual_account,
            recipient=first.recipient,
            amount=Decimal(index % 9000 + 1),
        )
        for index in range(ROWS - 1)
    )
    print(f"payout_list_queries_50={queries('/payouts/')}")
    print(f"quote_list_queries={queries('/quotes/')}")
    # A search over every row: by an exact amount and by the recipient's name (a LIKE per word).
    for name, term in (("amount", "539.00"), ("recipient", first.recipient.last_name)):
        url = f"/payouts/?q={term}"
        print(f"payout_search_{name}_queries={queries(url)}")
        started = time.perf_counter()
        assert client.get(url).status_code == 200
        print(f"payout_search_{name}_ms={(time.perf_counter() - started) * 1000:.0f}")
    tracemalloc.start()
    started = time.perf_counter()
    response = client.get("/payouts/export.csv")
    rows = sum(chunk.count(b"\n") for chunk in response.streaming_content) - 1
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"csv_export_rows={rows}")
    print(f"csv_export_seconds={elapsed:.2f}")
    print(f"csv_export_peak_kib={peak // 1024}")


if __name__ == "__main__":
    sys.exit(main())
