"""Sandbox-only page: the payout OTP read from the emulator's mailbox (never in production)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from gateway.models import EnvironmentKind
from payouts.models import Payout
from sandbox.control import EmulatorControl, EmulatorControlError
from staff.roles import PAYOUT_APPROVE


@login_required
@permission_required(PAYOUT_APPROVE, raise_exception=True)
def otp_mailbox(request: HttpRequest) -> HttpResponse:
    """
    The codes the emulator "emailed" to a sandbox environment's verification address, newest
    first, for the approver releasing payout `?payout=`. This app is installed only with the
    local and test settings, so the page does not exist in production at all.
    """
    payout_pk = request.GET.get("payout", "")
    if not payout_pk.isdigit():
        raise Http404("Say which payout: ?payout=<id>.")
    payout = get_object_or_404(Payout.objects.select_related("environment"), pk=int(payout_pk))
    environment = payout.environment
    if environment.kind != EnvironmentKind.SANDBOX or not environment.verification_email:
        raise Http404("Only a sandbox environment with a verification email has a mailbox here.")
    error = ""
    messages: list[dict[str, object]] = []
    try:
        with EmulatorControl(environment.base_url, settings.EMULATOR_CONTROL_TOKEN) as control:
            messages = control.mailbox(environment.verification_email)[:5]
    except EmulatorControlError as exc:
        error = f"The emulator did not answer: {exc}"
    return render(
        request,
        "sandbox/otp_mailbox.html",
        {
            "payout": payout,
            "messages": messages,
            "error": error,
            "email": environment.verification_email,
        },
    )
