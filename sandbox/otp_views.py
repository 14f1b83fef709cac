"""Sandbox-only: the emulator's OTP mailbox, as a page and as the code offered on the release step.

The emulator "emails" each payout code to a mailbox that its control API reads (decisions.md 2).
This app is installed only with the local and test settings, so neither the page nor the hint
exists in production; both also refuse an environment of the production kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from gateway.models import Environment, EnvironmentKind
from gateway.selectors import environment_current
from payouts.models import Payout
from payouts.release.code_hints import CodeHint
from sandbox.control import EmulatorControl, EmulatorControlError
from staff.roles import PAYOUT_APPROVE

SOURCE = "the emulator's sandbox mailbox"
SHOWN = 10  # the newest codes on the page: older ones no longer work anyway


@dataclass(frozen=True)
class MailedCode:
    """One message the emulator sent: its code, when, and what it said."""

    code: str
    sent_at: datetime | None
    subject: str
    body: str


def _moment(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def mailbox_read(environment: Environment, email: str) -> list[MailedCode]:
    """The codes the emulator sent to `email` through this sandbox environment, newest first."""
    with EmulatorControl(environment.base_url, settings.EMULATOR_CONTROL_TOKEN) as control:
        messages = control.mailbox(email)
    return [
        MailedCode(
            code=str(message.get("code", "")),
            sent_at=_moment(message.get("created_at")),
            subject=str(message.get("subject", "")),
            body=str(message.get("body", "")),
        )
        for message in messages
        # The emulator serves sandbox and production-like paths; a sandbox environment is the first.
        if message.get("environment", EnvironmentKind.SANDBOX) == EnvironmentKind.SANDBOX
    ]


def emulator_mailbox_hint(payout: Payout) -> CodeHint | None:
    """The release step's hint (payouts.release.code_hints): the newest code sent where it went."""
    environment = payout.environment
    if environment.kind != EnvironmentKind.SANDBOX or not payout.otp_sent_to:
        return None
    more_url = f"{reverse('sandbox:otp_mailbox')}?payout={payout.pk}"
    try:
        mail = mailbox_read(environment, payout.otp_sent_to)
    except EmulatorControlError as exc:
        problem = f"The emulator's mailbox did not answer: {exc}"
        return CodeHint(code="", sent_at=None, source=SOURCE, more_url=more_url, problem=problem)
    if not mail:
        problem = f"The emulator's mailbox holds no code for {payout.otp_sent_to} yet."
        return CodeHint(code="", sent_at=None, source=SOURCE, more_url=more_url, problem=problem)
    return CodeHint(code=mail[0].code, sent_at=mail[0].sent_at, source=SOURCE, more_url=more_url)


def _payout_of(request: HttpRequest, environment: Environment | None) -> Payout | None:
    """`?payout=` in the current environment (404 otherwise); None when the page has none."""
    wanted = request.GET.get("payout", "").strip()
    if not wanted:
        return None
    payout = None
    if wanted.isdigit():
        payout = (
            Payout.objects.select_related("environment")
            .filter(pk=int(wanted), environment=environment)
            .first()
        )
    if payout is None:
        raise Http404("No such payout in this environment.")
    return payout


@login_required
@permission_required(PAYOUT_APPROVE, raise_exception=True)
def otp_mailbox(request: HttpRequest) -> HttpResponse:
    """
    The codes the emulator "emailed" to the current sandbox environment's verification address
    (or, with `?payout=`, to where that payout's code went), newest first, with times in the
    staff's zone.
    """
    environment = environment_current(user=request.user)
    payout = _payout_of(request, environment)
    email = (payout.otp_sent_to if payout else "") or (
        environment.verification_email if environment else ""
    )
    mail: list[MailedCode] = []
    problem, status = "", 200
    if environment is None:
        problem, status = "No environment is selected: choose a sandbox environment.", 404
    elif environment.kind != EnvironmentKind.SANDBOX:
        problem = (
            f"{environment.name} is a production environment: its codes go to the real "
            "verification email, and there is no sandbox mailbox to read."
        )
        status = 404
    elif not email:
        problem = (
            f"{environment.name} has no verification email, so no code can be sent. "
            "An admin sets it on the environment."
        )
    else:
        try:
            mail = mailbox_read(environment, email)[:SHOWN]
        except EmulatorControlError as exc:
            problem = f"The emulator did not answer: {exc}"
    context = {
        "environment": environment,
        "payout": payout,
        "email": email,
        "mail": mail,
        "problem": problem,
    }
    return render(request, "sandbox/otp_mailbox.html", context, status=status)
