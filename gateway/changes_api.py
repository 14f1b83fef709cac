"""`/api/v1/changes`: admin changes (staff.changes) to read, approve, reject or withdraw.

Mounted by config/api.py; the same services as the Changes page (staff.change_views)."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.utils.translation import gettext
from ninja import Router, Schema

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES
from console.inputs import Text
from gateway.api_support import ChangeOut
from staff import roles
from staff.changes import change_approve, change_reject, change_withdraw, changes_list
from staff.errors import ServiceError
from staff.models import ChangeProposal
from staff.requests import staff_of

router = Router(tags=["changes"])


class RejectIn(Schema):
    reason: Text


def _proposal(change_id: int) -> ChangeProposal:
    proposal = (
        ChangeProposal.objects.select_related("proposed_by", "decided_by")
        .filter(pk=change_id)
        .first()
    )
    if proposal is None:
        raise Http404("No admin change has this id.")
    return proposal


def _out(proposal: ChangeProposal) -> ChangeOut:
    return ChangeOut.of(_proposal(proposal.pk))


@router.get("/changes", response={200: list[ChangeOut], **ERROR_RESPONSES})
@needs(roles.ADMIN_CHANGES_DECIDE, roles.AUDIT_LOG_VIEW)
def changes(request: HttpRequest, state: str = "") -> list[ChangeOut]:
    """Admin changes, newest first (`state=pending` for those waiting)."""
    if state and state not in ChangeProposal.State.values:
        raise ServiceError(
            gettext("Unknown state."),
            errors=[
                (
                    "state",
                    gettext("is one of: %(value)s")
                    % {"value": ", ".join(ChangeProposal.State.values)},
                )
            ],
        )
    return [ChangeOut.of(p) for p in changes_list(state=state)]


@router.get("/changes/{change_id}", response={200: ChangeOut, **ERROR_RESPONSES})
@needs(roles.ADMIN_CHANGES_DECIDE, roles.AUDIT_LOG_VIEW)
def change(request: HttpRequest, change_id: int) -> ChangeOut:
    return ChangeOut.of(_proposal(change_id))


@router.post("/changes/{change_id}/approve", response={200: ChangeOut, **ERROR_RESPONSES})
@needs(roles.ADMIN_CHANGES_DECIDE)
def approve(request: HttpRequest, change_id: int) -> ChangeOut:
    """Another admin approves (step-up): it applies now, or fails with why (`state`, `reason`)."""
    return _out(change_approve(proposal=_proposal(change_id), by=staff_of(request)))


@router.post("/changes/{change_id}/reject", response={200: ChangeOut, **ERROR_RESPONSES})
@needs(roles.ADMIN_CHANGES_DECIDE)
def reject(request: HttpRequest, change_id: int, body: RejectIn) -> ChangeOut:
    return _out(
        change_reject(proposal=_proposal(change_id), by=staff_of(request), reason=body.reason)
    )


@router.post("/changes/{change_id}/withdraw", response={200: ChangeOut, **ERROR_RESPONSES})
@needs(roles.ADMIN_CHANGES_DECIDE)
def withdraw(request: HttpRequest, change_id: int) -> ChangeOut:
    """Its proposer takes it back."""
    return _out(change_withdraw(proposal=_proposal(change_id), by=staff_of(request)))
