"""After a registration: re-read in the background what the mirrors may have missed; record it."""

from __future__ import annotations

import logging
from dataclasses import asdict

from django.conf import settings
from django.db import transaction

from gateway.models import Environment
from staff.actions import record_action
from webhooks.mirrors import CatchUpResult, mirrors
from webhooks.models import WebhookEndpoint

logger = logging.getLogger("webhooks")


def webhook_catch_up_queue_on_commit(*, environment: Environment) -> None:
    """Queue the catch-up once the caller's transaction (the registration) commits."""
    pk = environment.pk

    def queue() -> None:
        from django_q.tasks import async_task

        from webhooks.tasks import webhook_catch_up_task

        async_task(webhook_catch_up_task, pk, group="webhooks.catch_up")

    transaction.on_commit(queue)


def webhook_catch_up_run(*, environment: Environment) -> dict[str, CatchUpResult]:
    """
    Ask each mirroring app (webhooks.mirrors) to re-read its open records of `environment` and
    apply what changed, money first, at most WEBHOOKS_CATCH_UP_LIMIT of each kind. One app
    failing does not stop the others. Recorded in the audit trail (`webhooks.caught_up`, on the
    endpoint) and the log. Safe to run twice or late: the apply services are idempotent.
    """
    limit = int(settings.WEBHOOKS_CATCH_UP_LIMIT)
    results: dict[str, CatchUpResult] = {}
    for mirror in mirrors():
        try:
            results[mirror.kind] = mirror.catch_up(environment=environment, limit=limit)
        except Exception as exc:  # one app's bug must not cost the others their catch-up
            logger.exception("catch-up of %s in %s failed", mirror.label, environment.name)
            results[mirror.kind] = CatchUpResult(stopped=f"{type(exc).__name__}: {exc}"[:200])
    endpoint = WebhookEndpoint.objects.filter(environment=environment).first()
    with transaction.atomic():
        # The mirrors' own records announce what the catch-up changed; the run itself has no page.
        record_action(
            announce=False,
            actor=None,
            action="webhooks.caught_up",
            target=endpoint if endpoint is not None else environment,
            details={
                "environment": environment.name,
                "limit": limit,
                "kinds": {kind: asdict(result) for kind, result in results.items()},
            },
        )
    logger.info(
        "catch-up of %s: %s",
        environment.name,
        ", ".join(
            f"{kind} {r.changed}/{r.checked} changed" + (f" ({r.stopped})" if r.stopped else "")
            for kind, r in results.items()
        )
        or "nothing registered",
    )
    return results
