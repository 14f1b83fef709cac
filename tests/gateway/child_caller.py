"""A separate process calling the upstream through the gateway (multi-process tests and bench)."""

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


def main() -> None:
    setup()
    from gateway.client import call_sync, upstream
    from gateway.errors import UpstreamError
    from gateway.models import Environment

    environment_id, action, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    background = len(sys.argv) > 4 and sys.argv[4] == "background"
    environment = Environment.objects.get(pk=environment_id)
    client = upstream(environment, background=background)
    outcome: dict[str, int] = {"ok": 0, "rate_limited": 0, "budget": 0, "other": 0}
    deadline = time.monotonic() + seconds
    quote_id = None
    while time.monotonic() < deadline or action == "once":
        try:
            if action == "once":
                call_sync(client.quotations.create, quote_currency="MXN", amount=100)
                outcome["ok"] += 1
                break
            if quote_id is None:
                quote_id = call_sync(
                    client.quotations.create, quote_currency="MXN", amount=100
                ).quote_id
            else:
                call_sync(client.quotations.get, quote_id)
            outcome["ok"] += 1
        except UpstreamError as exc:
            key = {429: "rate_limited"}.get(exc.status or 0, "other")
            if exc.code in ("budget_exhausted", "limiter_timeout"):
                key = "budget"
            outcome[key] += 1
            if key == "budget" and exc.code == "budget_exhausted":
                break
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
