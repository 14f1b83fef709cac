"""A separate process calling the upstream through the gateway (multi-process tests and bench).

    child_caller.py <environment id> <action> <seconds> [background] [quote=<id>] [email=<e>]

Actions: `once` (one quotation), `hammer` (create a quote, then GET it until `seconds` pass),
`read` (GET quote=<id> until `seconds` pass), `user` (create the end user email=<e> with the
idempotency key of its row, committed first, then record it in a transaction; with
CHILD_CRASH_IN_TRANSACTION=1 the process dies inside that transaction, after the call),
`user_in_atomic` (creates the row and calls inside transaction.atomic(), which the gateway
refuses). The last line printed is a JSON outcome.
"""

from __future__ import annotations

import json
import os
import sys
import time


def setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    from django.conf import settings

    name = os.environ.get("G1_CHILD_DB_NAME")
    if name:
        settings.DATABASES["default"]["NAME"] = name
    import django

    django.setup()


def _user(environment: object, email: str, outcome: dict[str, object]) -> None:
    from django.db import transaction

    from gateway.client import call_sync, upstream
    from gateway.models import Environment
    from users.models import EndUser

    assert isinstance(environment, Environment)
    # The business row, committed with its key before the call (a re-run finds it again).
    end_user, _ = EndUser.objects.get_or_create(environment=environment, email=email)
    user = call_sync(
        upstream(environment).users.create,
        idempotency_key=str(end_user.idempotency_key),
        email=email,
        phone_number="+15555550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
    outcome["user_id"] = str(user.user_id)
    with transaction.atomic():
        end_user.upstream_id = str(user.user_id)
        end_user.save(update_fields=["upstream_id"])  # the follow-up write of the task
        if os.environ.get("CHILD_CRASH_IN_TRANSACTION") == "1":
            os._exit(3)  # killed inside the transaction, after the upstream call


def main() -> None:
    setup()
    from django.db import transaction

    from gateway.client import call_sync, upstream
    from gateway.errors import CalledInTransaction, UpstreamError
    from gateway.models import Environment
    from users.models import EndUser

    environment_id, action, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    options = dict(arg.split("=", 1) for arg in sys.argv[4:] if "=" in arg)
    background = "background" in sys.argv[4:]
    environment = Environment.objects.get(pk=environment_id)
    client = upstream(environment, background=background)
    outcome: dict[str, object] = {
        "ok": 0,
        "rate_limited": 0,
        "budget": 0,
        "other": 0,
        "timeouts": 0,
        "codes": [],
    }
    if action == "user":
        _user(environment, options["email"], outcome)
        outcome["ok"] = 1
        print(json.dumps(outcome), flush=True)
        return
    if action == "user_in_atomic":
        try:
            with transaction.atomic():
                end_user = EndUser.objects.create(environment=environment, email="refused@x.test")
                call_sync(
                    client.users.create,
                    idempotency_key=str(end_user.idempotency_key),
                    email=end_user.email,
                    phone_number="+15555550100",
                    first_name="Ada",
                    last_name="Lovelace",
                    country="US",
                )
        except CalledInTransaction as exc:
            outcome["refused"] = str(exc)
        print(json.dumps(outcome), flush=True)
        return
    deadline = time.monotonic() + seconds
    quote_id = options.get("quote")
    while time.monotonic() < deadline or action == "once":
        try:
            if action == "once":
                call_sync(client.quotations.create, quote_currency="MXN", amount=100)
                outcome["ok"] = 1
                break
            if quote_id is None:
                quote_id = call_sync(
                    client.quotations.create, quote_currency="MXN", amount=100
                ).quote_id
            else:
                call_sync(client.quotations.get, quote_id)
            outcome["ok"] = int(str(outcome["ok"])) + 1
        except UpstreamError as exc:
            key = {429: "rate_limited"}.get(exc.status or 0, "other")
            if exc.code in ("budget_exhausted", "limiter_timeout"):
                key = "budget"
            elif exc.code in ("timeout", "connection_error"):
                key = "timeouts"
            outcome[key] = int(str(outcome[key])) + 1
            codes = outcome["codes"]
            assert isinstance(codes, list)
            if exc.code not in codes:
                codes.append(exc.code)
            if key == "budget" and exc.code == "budget_exhausted":
                break
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
