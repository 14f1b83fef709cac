"""Links from events to local objects by upstream id, and the payment-link events' own handler.

An event names upstream objects by kind and id (`webhooks.contract`); the app that stores a kind
tells webhooks which model holds it, from its AppConfig.ready(), the way `register_event_handler`
and `register_mirror` work (webhooks never imports those apps):

    from webhooks.links import register_link_target
    register_link_target("payout", Payout)

A kind no app has registered (yet) is linked by kind and upstream id only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import models

from webhooks import contract


@dataclass(frozen=True)
class LinkTarget:
    """Where one kind of upstream object lives locally: its model and its upstream id column."""

    kind: str
    model: type[models.Model]
    upstream_id_field: str = "upstream_id"


LINK_TARGETS: dict[str, LinkTarget] = {}


def register_link_target(
    kind: str, model: type[models.Model], *, upstream_id_field: str = "upstream_id"
) -> None:
    """Events' `kind` ids link to rows of `model`; call it from the owning AppConfig.ready()."""
    named = {
        name for event_kind in contract.EVENT_KINDS.values() for name in event_kind.ids.values()
    }
    if kind not in named:
        raise ValueError(f"no event names a {kind!r} (known: {sorted(named)})")
    model._meta.get_field(upstream_id_field)  # FieldDoesNotExist at start-up, not at processing
    registered = LINK_TARGETS.get(kind)
    if registered is not None and registered.model is not model:
        raise ValueError(f"{kind!r} links already go to {registered.model.__name__}")
    LINK_TARGETS[kind] = LinkTarget(kind, model, upstream_id_field)


def local_object(kind: str, upstream_id: str, environment: Any = None) -> models.Model | None:
    """The local row for an upstream id (in that environment), when an app stores the kind."""
    target = LINK_TARGETS.get(kind)
    if target is None:
        return None
    model = target.model
    rows = model._default_manager.filter(**{target.upstream_id_field: upstream_id})
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
