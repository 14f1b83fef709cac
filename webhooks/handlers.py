"""Which app applies which events: each mirroring app registers its apply service here.

Webhooks stores, checks and links events; applying one to a mirrored record is the owning app's
job. Webhooks never imports those apps: each registers itself from its AppConfig.ready(), the way
console's `register_check` works (dj-stripe's webhook handler registry is the model),

    from webhooks.handlers import register_event_handler
    register_event_handler("payout", payout_apply_event)

and the contract (`webhooks.contract.EVENT_KINDS`) names, per event type, which kind of record it
applies to. An event whose kind has no handler registered is kept as "no handler yet" and retried,
never dropped.
"""

from __future__ import annotations

from typing import Any, Protocol

from webhooks import contract


class ApplyEvent(Protocol):
    """An app's apply service: returns the record it touched (or None), raises to be retried."""

    def __call__(self, *, environment: Any, event_type: str, data: dict[str, Any]) -> Any: ...


class HandlerMissing(Exception):
    """No app has registered the apply service of this event's kind (yet)."""


_HANDLERS: dict[str, ApplyEvent] = {}


def register_event_handler(kind: str, apply: ApplyEvent) -> None:
    """`apply` handles every event type whose contract entry applies to `kind`."""
    known = {event_kind.applies_to for event_kind in contract.EVENT_KINDS.values()}
    if kind not in known:
        raise ValueError(f"no event type applies to {kind!r} (known: {sorted(known)})")
    registered = _HANDLERS.get(kind)
    if registered is not None and registered is not apply:
        raise ValueError(f"{kind!r} events already go to {registered!r}")
    _HANDLERS[kind] = apply


def handler_for(event_type: str) -> ApplyEvent:
    """The apply service of an event type, or HandlerMissing while no app has registered one."""
    kind = contract.EVENT_KINDS[event_type].applies_to
    try:
        return _HANDLERS[kind]
    except KeyError:
        raise HandlerMissing(f"no app applies {kind} events ({event_type})") from None
