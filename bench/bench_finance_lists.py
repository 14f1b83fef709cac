"""The finance lists at 100,000 payouts, as ratios to Django's own admin changelist.

Run: python bench/bench_finance_lists.py [--rows 100000] [--pending 5000] [--rounds 3]
Uses DATABASE_URL when set (PostgreSQL), otherwise a temporary SQLite file. It migrates, loads
`--rows` payouts (`--pending` of them waiting for approval, a quote for every fourth) with one
INSERT ... SELECT, then for each page under test runs `--rounds` rounds; a round times, request
by request interleaved, a bare Django view, the admin changelist of the same model and the page.

Prints `name=value`: for each page `<page>_ratio` (its median over the changelist's median),
`<page>_median_ms`, `<page>_spread` (the lowest and highest round's ratio) and `<page>_queries`;
`changelist_<model>_median_ms` and `bare_median_ms`. The CSV export is timed WITHOUT tracemalloc
against a minimal `values_list` loop writing the same columns with the csv module
(`csv_export_ratio`); its memory is measured in separate runs at 10,000 rows and at `--rows`
(`csv_export_peak_kib_<rows>`: Python allocations while streaming, flat when the export streams).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._support import environment, migrate

REQUESTS_PER_ROUND = 5
RECIPIENTS = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--pending", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated page names (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env["DJANGO_DEBUG"] = "false"  # timings without the debug query log
        env.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1")
        migrate(env)
        os.environ.update(env)
        import django

        django.setup()
        run(args)


def bare_view(request):  # type: ignore[no-untyped-def]
    """The baseline: a Django view that renders nothing (middleware, session, user)."""
    from django.http import HttpResponse

    return HttpResponse("ok")


class QueryCounter(list[str]):
    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        self.append(sql)
        return execute(sql, params, many, context)


def setup() -> dict[str, object]:
    """Two makers, an admin (the one who reads every page), RECIPIENTS recipients and accounts."""
    from decimal import Decimal

    from accounts.models import Recipient, VirtualAccount
    from gateway.services.environments import environment_switch
    from staff.models import StaffUser
    from tests.finance import make_environment, make_staff
    from users.models import EndUser

    where = make_environment("Bench sandbox")
    makers = [make_staff("finance_maker"), make_staff("finance_maker")]
    admin = make_staff("admin")
    StaffUser.objects.filter(pk=admin.pk).update(is_staff=True, is_superuser=True)
    admin.refresh_from_db()
    environment_switch(user=admin, environment=where)
    users = EndUser.objects.bulk_create(
        EndUser(
            environment=where,
            email=f"u{i}@example.test",
            first_name="Ana",
            last_name=f"Silva{i}",
            country="US",
            status="verified",
            verification_status="verified",
            upstream_id=f"user-{i}",
        )
        for i in range(RECIPIENTS)
    )
    accounts = VirtualAccount.objects.bulk_create(
        VirtualAccount(
            environment=where,
            end_user=user,
            mode="fiat",
            status="active",
            available_balance=Decimal("5000.00"),
            upstream_id=f"va-{i}",
        )
        for i, user in enumerate(users)
    )
    recipients = Recipient.objects.bulk_create(
        Recipient(
            environment=where,
            end_user=user,
            kind="individual",
            first_name="Bea",
            last_name=f"Ruiz{i}",
            street_name="1 Main St",
            city="Austin",
            country="US",
            account_type="WIRE" if i % 3 else "SWIFT",
            account_number="123456789",
            routing_number="021000021",
            swift_code="" if i % 3 else "BOFAUS3NXXX",
            created_by=makers[i % 2],
            upstream_id=f"rcp-{i}",
            status="approved",
        )
        for i, user in enumerate(users)
    )
    return {
        "environment": where,
        "admin": admin,
        "makers": makers,
        "accounts": accounts,
        "recipients": recipients,
    }


def fill(world: dict[str, Any], *, rows: int, pending: int) -> None:
    """QUOTES quotes and `rows` payouts (the newest `pending` waiting for approval), the payouts
    inserted set-wise from one template row; any earlier ones are deleted first."""
    from decimal import Decimal

    from django.db import connection
    from django.utils import timezone

    from payouts.models import Payout
    from quotes.models import Quote

    started = time.perf_counter()
    Payout.objects.all().delete()
    Quote.objects.all().delete()
    where, makers = world["environment"], world["makers"]
    accounts, recipients = world["accounts"], world["recipients"]
    now = timezone.now()
    quotes = max(1, rows // 4)
    quote = Quote.objects.create(
        environment=where,
        upstream_id="q-template",
        requested_by=makers[0],
        base_currency="USD",
        quote_currency="MXN",
        account_type="WIRE",
        requested_amount=Decimal(100),
        base_amount=Decimal(100),
        quote_amount=Decimal(1700),
        rate=Decimal("17.000000"),
        service_rate=Decimal("17.100000"),
        status="USED",
        expires_at=now,
    )
    template = Payout.objects.create(
        environment=where,
        maker=makers[0],
        virtual_account=accounts[0],
        recipient=recipients[0],
        amount=Decimal("1.00"),
        reference="template",
        preview_recipient_amount=Decimal("17.00"),
        preview_recipient_currency="MXN",
        preview_total_fees=Decimal("2.50"),
    )
    vendor = connection.vendor
    if vendor == "postgresql":
        uuid = "gen_random_uuid()"
        at = "now() - n * interval '1 second'"
        series = "generate_series(1, {count}) AS n"
    else:
        uuid = "lower(hex(randomblob(16)))"
        at = "strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || n || ' seconds')"
        series = (
            "(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {count}) "
        )
        series += "SELECT n FROM s)"
    statuses = ("completed", "failed", "draft", "processing", "cancelled", "rejected")
    status = (
        f"CASE WHEN n <= {int(pending)} THEN 'pending_approval' ELSE CASE n % {len(statuses)} "
        + " ".join(f"WHEN {i} THEN '{s}'" for i, s in enumerate(statuses))
        + " END END"
    )
    upstream = f"CASE WHEN n <= {int(pending)} OR n % {len(statuses)} = 2 THEN NULL "
    upstream += "ELSE 'up-' || n END"
    at_minutes = at.replace("second", "minute").replace("seconds", "minutes")
    insert_series(
        Quote,
        quote.pk,
        quotes - 1,
        {
            "upstream_id": "'q-' || n",
            "requested_by_id": f"CASE WHEN n % 2 = 0 THEN {makers[0].pk} ELSE {makers[1].pk} END",
            "quote_currency": "CASE WHEN n % 2 = 0 THEN 'MXN' ELSE 'EUR' END",
            "status": "CASE WHEN n % 2 = 0 THEN 'USED' ELSE 'EXPIRED' END",
            "created_at": at_minutes,
            "expires_at": at_minutes,
        },
        series,
    )
    first = {
        "va": min(a.pk for a in accounts),
        "rcp": min(r.pk for r in recipients),
        "quote": quote.pk,
    }
    computed = {
        "idempotency_key": uuid,
        "maker_id": f"CASE WHEN n % 2 = 0 THEN {makers[0].pk} ELSE {makers[1].pk} END",
        "virtual_account_id": f"{first['va']} + n % {RECIPIENTS}",
        "recipient_id": f"{first['rcp']} + (n * 7) % {RECIPIENTS}",
        "amount": "n % 9000 + 1",
        "quote_id": f"CASE WHEN n % 4 = 0 THEN {first['quote']} + n % {quotes} ELSE NULL END",
        "reference": "'ref-' || n",
        "status": status,
        "upstream_id": upstream,
        "created_at": at,
        "updated_at": at,
        "submitted_at": f"CASE WHEN n <= {int(pending)} THEN {at} ELSE NULL END",
    }
    insert_series(Payout, template.pk, rows - 1, computed, series)
    if vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {Payout._meta.db_table}")
            cursor.execute(f"ANALYZE {Quote._meta.db_table}")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"load_seconds_{rows}={time.perf_counter() - started:.1f}")


def insert_series(
    model: Any, template: int, count: int, computed: dict[str, str], series: str
) -> None:
    """`count` copies of row `template` of `model` in one INSERT ... SELECT over n = 1..count,
    with the columns of `computed` given by SQL expressions of n."""
    from django.db import connection

    quote_name = connection.ops.quote_name
    columns = [f.column for f in model._meta.concrete_fields if f.column != "id"]
    table = model._meta.db_table
    select = ", ".join(computed.get(c, f"t.{quote_name(c)}") for c in columns)
    names = ", ".join(quote_name(c) for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({names}) SELECT {select} "
            f"FROM {series.format(count=int(count))} "
            f"CROSS JOIN (SELECT * FROM {table} WHERE id = {int(template)}) t"
        )


def measure(
    name: str,
    page: Callable[[], object],
    changelist: Callable[[], object],
    bare: Callable[[], object],
    *,
    rounds: int,
) -> None:
    samples: dict[str, list[float]] = {"bare": [], "changelist": [], "page": []}
    ratios = []
    for _ in range(rounds):
        this_round: dict[str, list[float]] = {"bare": [], "changelist": [], "page": []}
        for _ in range(REQUESTS_PER_ROUND):
            for key, call in (("bare", bare), ("changelist", changelist), ("page", page)):
                started = time.perf_counter()
                call()
                this_round[key].append((time.perf_counter() - started) * 1000)
        for key, values in this_round.items():
            samples[key].extend(values)
        ratios.append(
            statistics.median(this_round["page"]) / statistics.median(this_round["changelist"])
        )
    ratio = statistics.median(samples["page"]) / statistics.median(samples["changelist"])
    print(f"{name}_ratio={ratio:.2f}")
    print(f"{name}_median_ms={statistics.median(samples['page']):.1f}")
    print(f"{name}_spread={min(ratios):.2f}-{max(ratios):.2f}")
    print(f"{name}_changelist_median_ms={statistics.median(samples['changelist']):.1f}")
    print(f"{name}_bare_median_ms={statistics.median(samples['bare']):.1f}")


def run(args: argparse.Namespace) -> None:
    import csv

    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.urls import include, path

    from payouts.models import Payout
    from staff.api_tokens import api_token_create
    from tests.identity import client_signed_in

    urlpatterns = [path("bench-bare/", bare_view), path("", include(settings.ROOT_URLCONF))]
    module = type(sys)("bench_finance_urls")
    module.urlpatterns = urlpatterns  # type: ignore[attr-defined]
    sys.modules["bench_finance_urls"] = module
    settings.ROOT_URLCONF = "bench_finance_urls"

    small = min(10_000, args.rows)
    world = setup()
    fill(world, rows=small, pending=min(args.pending, small // 2))
    admin = world["admin"]
    settings.ALLOWED_HOSTS = ["*"]
    client = client_signed_in(admin)  # type: ignore[arg-type]
    token = api_token_create(user=admin, name="bench").plaintext  # type: ignore[arg-type]
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")

    def export_peak_kib() -> int:
        tracemalloc.start()
        response = client.get("/payouts/export.csv")
        lines = sum(chunk.count(b"\n") for chunk in response.streaming_content)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert lines == Payout.objects.count() + 1, lines
        return peak // 1024

    print(f"csv_export_peak_kib_{small}={export_peak_kib()}")
    if args.rows > small:
        fill(world, rows=args.rows, pending=args.pending)

    def get(who: Client, url: str, status: int = 200) -> Callable[[], object]:
        def call() -> object:
            response = who.get(url)
            assert response.status_code == status, (url, response.status_code)
            if response.streaming:
                return sum(len(chunk) for chunk in response.streaming_content)
            return len(response.content)

        return call

    bare = get(client, "/bench-bare/")
    payout_admin = get(client, "/admin/payouts/payout/")
    quote_admin = get(client, "/admin/quotes/quote/")
    pages = {
        "payout_list": (get(client, "/payouts/"), payout_admin),
        "payout_list_page_40": (get(client, "/payouts/?page=40"), payout_admin),
        "payout_list_status": (get(client, "/payouts/?status=completed"), payout_admin),
        "payout_api": (get(api, "/api/v1/payouts"), payout_admin),
        "inbox_mine": (get(client, "/payouts/approvals/"), payout_admin),
        "inbox_anyone": (get(client, "/payouts/approvals/?scope=anyone"), payout_admin),
        "inbox_api": (get(api, "/api/v1/approvals?scope=anyone"), payout_admin),
        "quote_list": (get(client, "/quotes/"), quote_admin),
    }
    only = {name for name in args.only.split(",") if name}
    for name, (page, changelist) in pages.items():
        if only and name not in only:
            continue
        page()  # warm: templates, session, permissions
        changelist()
        executed = QueryCounter()
        with connection.execute_wrapper(executed):
            page()
        print(f"{name}_queries={len(executed)}")
        measure(name, page, changelist, bare, rounds=args.rounds)
    if only and "csv_export" not in only:
        return

    # The export against the least work that writes the same rows: values_list into csv.
    columns = (
        "pk", "created_at", "status", "maker__email", "virtual_account__upstream_id",
        "recipient__last_name", "recipient__account_type", "mode", "amount", "currency",
        "preview_total_fees", "preview_recipient_amount", "preview_recipient_currency",
        "quote__upstream_id", "reference", "upstream_id", "submitted_at",
    )  # fmt: skip

    class Sink:
        def write(self, value: str) -> int:
            return len(value)

    def minimal() -> object:
        writer = csv.writer(Sink())
        rows = Payout.objects.order_by("-created_at", "-pk").values_list(*columns)
        return sum(writer.writerow(row) for row in rows.iterator(chunk_size=2000))

    export = get(client, "/payouts/export.csv")
    export()
    minimal()
    times: dict[str, list[float]] = {"export": [], "minimal": []}
    ratios = []
    for _ in range(args.rounds):
        pair = {}
        for key, call in (("minimal", minimal), ("export", export)):
            started = time.perf_counter()
            call()
            pair[key] = time.perf_counter() - started
            times[key].append(pair[key])
        ratios.append(pair["export"] / pair["minimal"])
    print(f"csv_export_rows={Payout.objects.count()}")
    print(f"csv_export_seconds={statistics.median(times['export']):.2f}")
    print(f"csv_minimal_seconds={statistics.median(times['minimal']):.2f}")
    ratio = statistics.median(times["export"]) / statistics.median(times["minimal"])
    print(f"csv_export_ratio={ratio:.2f}")
    print(f"csv_export_spread={min(ratios):.2f}-{max(ratios):.2f}")
    print(f"csv_export_peak_kib_{args.rows}={export_peak_kib()}")


if __name__ == "__main__":
    main()
