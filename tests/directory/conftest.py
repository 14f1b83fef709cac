"""Directory test fixtures: one staff member per role, API clients acting through tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from staff.api_tokens import api_token_create, scopes_within_role
from staff.bootstrap import seed_demo_staff
from staff.models import StaffUser
from staff.roles import roles_sync
from tests.gateway.conftest import live_emulator, sandbox  # noqa: F401  (fixtures reused here)


@pytest.fixture
def staff(db: None) -> dict[str, StaffUser]:
    """The demo staff by role key: finance_maker, finance_approver, compliance, admin."""
    roles_sync()
    return {user.groups.get().name: user for user in seed_demo_staff()}


class ApiClient:
    """Calls /api/v1 with `Authorization: Bearer <token>` of one staff member."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.client = Client()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/api/v1/{path}", params, headers=self._headers())

    def post(self, path: str, body: Any | None = None) -> Any:
        return self.client.post(
            f"/api/v1/{path}",
            json.dumps(body or {}),
            content_type="application/json",
            headers=self._headers(),
        )

    def patch(self, path: str, body: Any) -> Any:
        return self.client.patch(
            f"/api/v1/{path}",
            json.dumps(body),
            content_type="application/json",
            headers=self._headers(),
        )


@pytest.fixture
def api(staff: dict[str, StaffUser]) -> dict[str, ApiClient]:
    """An API client per role, each acting through that person's personal token with every
    scope their roles reach (so each acts with their role's permissions; tests/config covers the
    scopes)."""
    return {
        role: ApiClient(
            api_token_create(
                user=user, name="tests", scopes=scopes_within_role(user), days=90
            ).plaintext
        )
        for role, user in staff.items()
    }


def emulator_events(environment: Any, *, event: str | None = None) -> list[dict[str, Any]]:
    """The events the emulator emitted for this environment's client, oldest first."""
    from emulator.models import WebhookEvent

    rows = WebhookEvent.objects.filter(client__client_id=environment.client_id).order_by(
        "created_at", "id"
    )
    if event:
        rows = rows.filter(event=event)
    return [{"event": row.event, "data": row.data} for row in rows]


def user_values(email: str = "ana@example.com", **overrides: Any) -> dict[str, Any]:
    values = {
        "type": "individual",
        "email": email,
        "phone_number": "+52 55 1234 5678",
        "first_name": "Ana",
        "last_name": "García",
        "country": "MX",
    }
    values.update(overrides)
    return values


WIRE_RECIPIENT = {
    "kind": "individual",
    "first_name": "Luis",
    "last_name": "Pérez",
    "email": "luis@example.com",
    "street_name": "1 Main St",
    "city": "Austin",
    "state": "TX",
    "postal_code": "78701",
    "country": "US",
    "account_type": "WIRE",
    "account_number": "123456789",
    "routing_number": "021000021",
    "bank_name": "Chase",
}
