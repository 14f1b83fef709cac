"""django-q2 tasks of webhooks: thin wrappers that load ids and call services."""

from __future__ import annotations

from gateway.models import Environment
from webhooks.services import (
    webhook_catch_up_run,
    webhook_deliveries_prune,
    webhook_event_process,
    webhook_events_retry_due,
    webhook_reprocess_run,
)


def webhook_event_process_task(event_pk: int, trigger: str = "receipt") -> str:
    return webhook_event_process(event_pk=event_pk, trigger=trigger)


def webhook_events_retry_due_task() -> int:
    return webhook_events_retry_due()


def webhook_reprocess_run_task(run_pk: int) -> int:
    return webhook_reprocess_run(run_pk=run_pk).done


def webhook_deliveries_prune_task() -> int:
    return webhook_deliveries_prune()


def webhook_catch_up_task(environment_pk: int) -> str:
    """Re-read what a newly registered receiver missed (queued when a registration commits)."""
    environment = Environment.objects.filter(pk=environment_pk).first()
    if environment is None:
        return "environment gone"
    results = webhook_catch_up_run(environment=environment)
    return ", ".join(f"{kind}: {r.changed}/{r.checked} changed" for kind, r in results.items())
