"""Directory list pages and endpoints at 10 and 2,000 rows: queries per request and time.

Prints `name=value`. The query counts must not grow with the rows (the tests assert that; this
shows the figures), and the time shows what a page of 25 (pages) or 50 (API) costs over a large
table. Uses its own SQLite file (or DATABASE_URL) and no emulator: it reads mirrored rows only.
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

ROUNDS = 15


class QueryCounter(list[str]):
    """A database execute wrapper that keeps the SQL of each query it lets through."""

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        self.append(sql)
        return execute(sql, params, many, context)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = environment(tmp)
        env["DJANGO_DEBUG"] = "false"  # timings without the debug query log
        env.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1")
        migrate(env)
        os.environ.update(env)
        import django

        django.setup()
        run()


def run() -> None:
    from django.db import connection
    from django.test import Client

    from accounts.models import Recipient, VirtualAccount
    from gateway.models import Environment, EnvironmentKind
    from staff.api_tokens import api_token_create
    from staff.bootstrap import seed_demo_staff
    from staff.roles import roles_sync
    from users.models import EndUser

    roles_sync()
    staff = {user.groups.get().name: user for user in seed_demo_staff()}
    admin = staff["admin"]
    env = Environment.objects.filter(kind=EnvironmentKind.SANDBOX).first()
    if env is None:
        env = Environment.objects.create(
            name="bench", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
        )
    page = Client(HTTP_HOST="127.0.0.1")
    page.force_login(admin)
    token = api_token_create(user=admin, name="bench").plaintext
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")

    def seed(upto: int) -> None:
        start = EndUser.objects.filter(environment=env).count()
        for i in range(start, upto):
            user = EndUser.objects.create(
                environment=env,
                upstream_id=f"bench-u-{i}",
                email=f"u{i}@example.com",
                first_name="U",
                last_name=str(i),
                country="MX",
                created_by=staff["compliance"],
                verification_status="verified",
            )
            VirtualAccount.objects.create(
                environment=env, upstream_id=f"bench-va-{i}", end_user=user, created_by=admin
            )
            Recipient.objects.create(
                environment=env,
                upstream_id=f"bench-r-{i}",
                end_user=user,
                kind="individual",
                first_name="R",
                last_name=str(i),
                street_name="s",
                city="c",
                country="US",
                account_type="WIRE",
                account_number="123456789",
                routing_number="021000021",
                created_by=staff["finance_maker"],
            )

    targets = {
        "end_user_page": (page, "/end-users/"),
        "virtual_account_page": (page, "/accounts/"),
        "recipient_page": (page, "/accounts/recipients/"),
        "end_user_api": (api, "/api/v1/end-users"),
        "recipient_api": (api, "/api/v1/recipients"),
    }
    for rows in (10, 2000):
        seed(rows)
        for name, (client, path) in targets.items():
            client.get(path)  # warm caches (session, permissions, token last use)
            executed = QueryCounter()
            with connection.execute_wrapper(executed):
                assert client.get(path).status_code == 200
            times = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                client.get(path)
                times.append((time.perf_counter() - started) * 1000)
            print(f"{name}_queries_rows{rows}={len(executed)}")
            print(f"{name}_median_ms_rows{rows}={statistics.median(times):.1f}")


if __name__ == "__main__":
    main()
