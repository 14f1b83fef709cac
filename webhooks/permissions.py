"""The webhook permissions (declared on WebhookEndpoint.Meta) and who holds which group."""

from __future__ import annotations

from staff.roles import DIRECTORY_VIEW, FINANCE_VIEW, WEBHOOK_EVENTS_VIEW, WEBHOOKS_MANAGE

__all__ = ["GROUP_PERMISSIONS", "WEBHOOKS_MANAGE", "WEBHOOK_EVENTS_VIEW"]

# Who may join a live group: the event stream, or one object's group.
GROUP_PERMISSIONS: dict[str, str] = {
    "events": WEBHOOK_EVENTS_VIEW,
    "user": DIRECTORY_VIEW,
    "virtual_account": DIRECTORY_VIEW,
    "payout": FINANCE_VIEW,
}
