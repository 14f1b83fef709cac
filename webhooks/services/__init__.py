"""Webhook writes: endpoints and rotation, catch-up, receiving, processing, gaps, retention."""

from webhooks.services.catch_up import webhook_catch_up_run
from webhooks.services.endpoints import (
    endpoint_url,
    receiver_url,
    secret_generate,
    webhook_endpoint_get_or_create,
    webhook_endpoint_register,
    webhook_secret_rotate,
    webhook_secrets_reveal,
)
from webhooks.services.gaps import missed_event_record, receivers_missing, silences
from webhooks.services.processing import (
    webhook_event_process,
    webhook_events_retry_due,
    webhook_reprocess_run,
    webhook_reprocess_start,
)
from webhooks.services.receiving import delivery_receive
from webhooks.services.retention import webhook_deliveries_prune

__all__ = [
    "delivery_receive",
    "endpoint_url",
    "missed_event_record",
    "receiver_url",
    "receivers_missing",
    "secret_generate",
    "silences",
    "webhook_catch_up_run",
    "webhook_deliveries_prune",
    "webhook_endpoint_get_or_create",
    "webhook_endpoint_register",
    "webhook_event_process",
    "webhook_events_retry_due",
    "webhook_reprocess_run",
    "webhook_reprocess_start",
    "webhook_secret_rotate",
    "webhook_secrets_reveal",
]
