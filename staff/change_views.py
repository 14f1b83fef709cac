"""The Changes inbox: admin changes waiting for a second admin, and their history."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from staff.changes import (
    change_approve,
    change_reject,
    change_withdraw,
    changes_list,
    proposal_message,
)
from staff.errors import ServiceError
from staff.middleware import step_up_url
from staff.models import ChangeProposal, StaffUser
from staff.roles import ADMIN_CHANGES_DECIDE, AUDIT_LOG_VIEW
from staff.step_up import StepUpRequired


class RejectForm(forms.Form):
    reason = forms.CharField(
        label=gettext_lazy("Reason"),
        max_length=500,
        help_text=gettext_lazy("Kept with the change."),
    )


def _staff(request: HttpRequest) -> StaffUser:
    return request.user  # type: ignore[return-value]


@login_required
def changes(request: HttpRequest) -> HttpResponse:
    """Admins decide here; an auditor (who reads the audit trail) reads the same list."""
    if not (request.user.has_perm(ADMIN_CHANGES_DECIDE) or request.user.has_perm(AUDIT_LOG_VIEW)):
        raise PermissionDenied
    pending = changes_list(state=ChangeProposal.State.PENDING)
    history = [p for p in changes_list(limit=100) if not p.is_pending]
    return render(
        request,
        "staff/changes.html",
        {"pending": pending, "history": history, "reject_form": RejectForm()},
    )


def _decide(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    proposal = get_object_or_404(ChangeProposal, pk=pk)
    user = _staff(request)
    try:
        if action == "approve":
            proposal = change_approve(proposal=proposal, by=user)
        elif action == "reject":
            reason = str(request.POST.get("reason", ""))[:500]
            proposal = change_reject(proposal=proposal, by=user, reason=reason)
        else:
            proposal = change_withdraw(proposal=proposal, by=user)
    except StepUpRequired:
        return redirect(step_up_url(reverse("staff:changes")))
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        if proposal.state == ChangeProposal.State.FAILED:
            messages.error(request, proposal_message(proposal))
        else:
            messages.success(request, f"{proposal.summary}: {proposal.get_state_display()}.")
    return redirect("staff:changes")


@login_required
@permission_required(ADMIN_CHANGES_DECIDE, raise_exception=True)
@require_POST
def change_approve_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(request, pk, "approve")


@login_required
@permission_required(ADMIN_CHANGES_DECIDE, raise_exception=True)
@require_POST
def change_reject_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(request, pk, "reject")


@login_required
@permission_required(ADMIN_CHANGES_DECIDE, raise_exception=True)
@require_POST
def change_withdraw_view(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(request, pk, "withdraw")
