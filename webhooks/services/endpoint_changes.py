"""Webhook registration and secret rotation as admin changes (staff.changes).

The proposal holds only which environment, the base URL and whether to rotate: the new secret is
generated when the change applies (webhooks.services.endpoints), so it is never in a proposal.
Applying calls the upstream, so it runs after the approval commits (`in_transaction=False`).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, gettext_lazy

from gateway.models import Environment
from staff import crypto
from staff.changes import change_propose, register_change_kind
from staff.errors import ServiceError
from staff.models import ChangeProposal
from webhooks.models import WebhookEndpoint
from webhooks.services.endpoints import (
    _require_manage,
    receiver_url,
    webhook_endpoint_get_or_create,
    webhook_endpoint_register,
    webhook_secret_rotate,
)

KIND = "webhooks.endpoint"


def _version(proposal: ChangeProposal) -> str:
    endpoint = WebhookEndpoint.objects.filter(
        environment_id=proposal.payload["environment"]
    ).first()
    if endpoint is None:
        return "unregistered"
    # The secret itself, not its ciphertext: a key rotation is no change of the endpoint.
    return crypto.secrets_version(
        "webhook_endpoint", f"{endpoint.secret}|{endpoint.registered_url}"
    )


def webhook_endpoint_change_propose(
    *, environment: Environment, by: Any, base_url: str = "", rotate: bool
) -> ChangeProposal:
    """Propose registering the receiver (or rotating its secret) for `environment`."""
    _require_manage(by)
    if not environment.has_credentials:
        raise ServiceError(
            gettext("This environment has no upstream credentials."),
            errors=[("environment", gettext("has no upstream credentials"))],
        )
    endpoint = webhook_endpoint_get_or_create(environment=environment)
    current = endpoint.registered_url
    # Refused now (400 on `base_url`) rather than when another admin approves it.
    url = receiver_url(endpoint, base_url=base_url)
    action = "Rotate the webhook secret" if rotate else "Register the webhook receiver"
    return change_propose(
        kind=KIND,
        by=by,
        target=environment,
        target_label=environment.name,
        summary=f"{action} of {environment.name}",
        before={"url": current or "not registered", "secret": "current" if current else "none"},
        after={"url": url, "secret": "replaced" if rotate else "kept"},
        payload={"environment": environment.pk, "base_url": base_url, "rotate": rotate},
    )


def _apply(proposal: ChangeProposal, *, by: Any) -> None:
    environment = Environment.objects.get(pk=proposal.payload["environment"])
    service = webhook_secret_rotate if proposal.payload["rotate"] else webhook_endpoint_register
    service(environment=environment, by=by, base_url=proposal.payload["base_url"])


def register_webhook_change_kinds() -> None:
    register_change_kind(
        KIND,
        apply=_apply,
        version=_version,
        label=gettext_lazy("Webhook receiver"),
        in_transaction=False,
    )
