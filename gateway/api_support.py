"""
Shared pieces of the API routers that need the gateway: `?environment=` (the environment a
request acts in, which is the gateway's), the acting staff member's checks, and an admin change's
shape. The one error schema and pages of a list live lower, in `console.api_schemas`.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.translation import gettext
from ninja import Field, Query, Schema

from gateway.models import Environment
from gateway.selectors import environment_current
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.requests import staff_of

ENVIRONMENT_QUERY_DESCRIPTION = (
    "Name of the upstream environment to work in; defaults to the caller's current environment."
)
# The `?environment=NAME` parameter of every endpoint that works in one environment.
EnvironmentName = Query(None, description=ENVIRONMENT_QUERY_DESCRIPTION)


def request_key(value: str | None) -> uuid.UUID | None:
    """The `Idempotency-Key` header as a UUID (None when absent); 400 on that field otherwise."""
    if not value:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        raise ServiceError(
            gettext("Idempotency-Key must be a UUID."),
            errors=[("Idempotency-Key", gettext("must be a UUID"))],
        ) from None


def api_environment(request: HttpRequest, name: str | None) -> Environment:
    """The environment `?environment=NAME` names, or the caller's current one."""
    if name:
        environment = Environment.objects.filter(name=name, is_active=True).first()
        if environment is None:
            raise ServiceError(
                gettext("No active environment is named %(name)r.") % {"name": name},
                code="unknown_environment",
                errors=[("environment", gettext("no active environment has this name"))],
            )
        return environment
    environment = environment_current(user=request.user)
    if environment is None:
        raise ServiceError(
            gettext("No upstream environment is configured yet."),
            code="no_environment",
            errors=[("environment", gettext("configure an environment first"))],
        )
    return environment


def require_permission(request: HttpRequest, permission: str) -> None:
    """403 unless the caller (session or token) holds `permission`."""
    if not request.user.has_perm(permission):
        raise PermissionDenied(
            gettext("You do not have the permission %(permission)s.") % {"permission": permission}
        )


def acting_staff(request: HttpRequest) -> StaffUser:
    """The staff member the request acts as (token or session; auth guarantees one)."""
    return staff_of(request)


class ChangeDiffOut(Schema):
    field: str
    before: Any = None
    after: Any = None


class ChangeOut(Schema):
    """An admin change (staff.changes): what it changes, who proposed and decided it, its state."""

    id: int
    kind: str
    summary: str
    target_type: str
    target_id: str
    target: str
    state: str
    diff: list[ChangeDiffOut]
    proposed_by: str
    proposed_at: Any
    apply_after: Any = Field(
        None, description="Where no other admin exists: when it applies unless someone decides."
    )
    decided_by: str | None = None
    decided_at: Any = None
    reason: str = ""

    @staticmethod
    def of(proposal: Any) -> ChangeOut:
        return ChangeOut(
            id=proposal.pk,
            kind=proposal.kind,
            summary=proposal.summary,
            target_type=proposal.target_type,
            target_id=proposal.target_id,
            target=proposal.target_label,
            state=proposal.state,
            diff=[
                ChangeDiffOut(field=field, before=before, after=after)
                for field, before, after in proposal.diff_rows()
            ],
            proposed_by=proposal.proposed_by.email,
            proposed_at=proposal.proposed_at,
            apply_after=proposal.apply_after,
            decided_by=proposal.decided_by.email if proposal.decided_by else None,
            decided_at=proposal.decided_at,
            reason=proposal.reason,
        )
