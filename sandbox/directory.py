"""Sandbox-only staff actions on directory records: decide a `+review` user, simulate a deposit.

They drive the emulator that the record's environment points at (its /_control/ calls, through
sandbox.control), then call the product services to read the outcome back. This app is installed
by local and test settings only, so these views never exist in production; they also refuse an
environment of the production kind.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from accounts.selectors import virtual_account_get
from accounts.virtual_accounts import may_fund_in_sandbox, virtual_account_refresh
from console.inputs import amount_problem
from gateway.models import Environment
from sandbox.control import EmulatorControl, EmulatorControlError
from staff import roles
from staff.audit import audit_record
from staff.errors import ServiceError
from staff.requests import staff_of
from users.selectors import end_user_get
from users.services import end_user_refresh
from users.views import current_environment

REASONS = ("document_unreadable", "document_expired", "face_mismatch", "sanctions_match")


def _control(environment: Environment) -> EmulatorControl:
    if environment.is_production:
        raise PermissionDenied("Sandbox actions never touch a production environment.")
    return EmulatorControl(environment.base_url, settings.EMULATOR_CONTROL_TOKEN)


def _drive_then_refresh(
    request: HttpRequest,
    environment: Environment,
    *,
    drive: Callable[[EmulatorControl], object],
    what: str,
    action: str,
    target: Model,
    details: dict[str, Any],
    refresh: Callable[[], object],
    done: str,
    success: str,
) -> None:
    """Drive the emulator (`drive` with its control client); once it agreed, audit `action` on
    `target` and read the outcome back with `refresh`. Each outcome is a message for the next page:
    the emulator refused the `what`, `done` but the refresh failed, or `success`."""
    try:
        with _control(environment) as control:
            drive(control)
    except EmulatorControlError as exc:
        messages.error(request, f"The emulator refused the {what}: {exc}")
        return
    with transaction.atomic():
        audit_record(actor=staff_of(request), action=action, target=target, details=details)
    try:
        refresh()
    except ServiceError as exc:
        messages.warning(request, f"{done}, but the refresh failed: {exc.message}")
    else:
        messages.success(request, success)


@login_required
@require_POST
@permission_required(roles.KYC_REVIEW, raise_exception=True)
def decide_end_user(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept or reject a user waiting for a KYC decision, as the upstream's reviewer would."""
    environment = current_environment(request)
    user = end_user_get(environment=environment, pk=pk)
    accept = request.POST.get("decision") == "accept"
    reason = request.POST.get("reason", "")
    reasons = [] if accept else [reason if reason in REASONS else REASONS[0]]
    _drive_then_refresh(
        request,
        environment,
        drive=lambda control: control.decide_user(
            user_id=user.upstream_id, accept=accept, reasons=reasons
        ),
        what="decision",
        action="sandbox.end_user_decided",
        target=user,
        details={"accept": accept, "reasons": reasons},
        refresh=lambda: end_user_refresh(end_user=user, by=staff_of(request)),
        done="Decided",
        success="Sandbox: verification " + ("accepted." if accept else "rejected."),
    )
    return redirect("users:detail", pk=pk)


@login_required
@require_POST
def simulate_deposit(request: HttpRequest, pk: int) -> HttpResponse:
    """An incoming deposit on an active account; the balance is read back at once. Admins, and
    the people who prepare payouts (their test accounts' money), may."""
    if not may_fund_in_sandbox(request.user):
        raise PermissionDenied
    environment = current_environment(request)
    va = virtual_account_get(environment=environment, pk=pk)
    typed = request.POST.get("amount", "")
    try:
        amount = Decimal(0) if amount_problem(typed) else Decimal(typed)
    except InvalidOperation:
        amount = Decimal(0)
    if not amount.is_finite() or amount <= 0 or amount != amount.quantize(Decimal("0.01")):
        messages.error(
            request,
            "Enter a positive amount in dollars and cents, e.g. 1500.00 (ASCII digits 0-9 and "
            "a dot, no spaces).",
        )
        return redirect("accounts:virtual_account_detail", pk=pk)
    _drive_then_refresh(
        request,
        environment,
        drive=lambda control: control.deposit(virtual_account_id=va.upstream_id, amount=amount),
        what="deposit",
        action="sandbox.deposit_simulated",
        target=va,
        details={"amount": amount, "currency": va.currency},
        refresh=lambda: virtual_account_refresh(virtual_account=va, by=staff_of(request)),
        done="Deposited",
        success=f"Sandbox: {amount:,.2f} {va.currency} deposited.",
    )
    return redirect("accounts:virtual_account_detail", pk=pk)
