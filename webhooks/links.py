"""Links from events to local objects by upstream id, and the payment-link events' own handler."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import FieldDoesNotExist
from django.db import models

# Where each kind of upstream object lives locally, if its app has it yet. The upstream id column
# is found by name (the first of `upstream_id`, `<kind>_id` that the model has), so the directory,
# quotes and payouts apps can land in any order.
LOCAL_MODELS: dict[str, tuple[str, str]] = {
    "user": ("users", "EndUser"),
    "virtual_account": ("accounts", "VirtualAccount"),
    "recipient": ("accounts", "Recipient"),
    "quote": ("quotes", "Quote"),
    "payout": ("payouts", "Payout"),
}


def _local_model(kind: str) -> tuple[type[models.Model], str] | None:
    target = LOCAL_MODELS.get(kind)
    if target is None:
        return None
    try:
        model = apps.get_model(*target)
    except LookupError:
        return None
    for name in ("upstream_id", f"{kind}_id"):
        try:
            model._meta.get_field(name)
        except FieldDoesNotExist:
            continue
        return model, name
    return None


def local_object(kind: str, upstream_id: str, environment: Any = None) -> models.Model | None:
    """The local row for an upstream id (in that environment), when its app stores the kind."""
    found = _local_model(kind)
    if found is None:
        return None
    model, field_name = found
    rows = model._default_manager.filter(**{field_name: upstream_id})
    if environment is not None and any(f.name == "environment" for f in model._meta.fields):
        rows = rows.filter(environment=environment)
    return rows.first()


def link_fill(
    link: Any,
    instance: models.Model | None = None,
    *,
    touched: bool = False,
    environment: Any = None,
) -> bool:
    """Point a WebhookEventLink at its local row (given, or looked up); True when it changed."""
    instance = instance or local_object(link.kind, link.upstream_id, environment)
    if instance is None:
        if touched and not link.touched:
            link.touched = True
            return True
        return False
    content_type = ContentType.objects.get_for_model(instance)
    changed = (
        link.content_type_id != content_type.pk
        or link.object_pk != str(instance.pk)
        or (touched and not link.touched)
    )
    link.content_type = content_type
    link.object_pk = str(instance.pk)
    link.touched = link.touched or touched
    return changed


def payment_link_event_record(*, environment: Any, event_type: str, data: dict[str, Any]) -> None:
    """card_payment and barcode_generated: no app owns payment links; the event is the record.

    Its links (user, recipient, quote by upstream id) are made by processing from the contract;
    nothing else changes, so the event is processed once those are written.
    """
    return None
