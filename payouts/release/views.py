"""The release step on the payout page: send the code, enter it, resend; its HTMX fragments.

The step (`templates/payouts/includes/release_step.html`, `#release-step`) is part of the
payout's live region and answers its own actions with itself. A confirmed code moved the payout
(its status, its timeline), so that answer also re-reads the whole region once it is in the
page: a swap never aims at a region that a live refresh replaced meanwhile. The services decide
(`payouts.release.code`, `payouts.release.step`); these views only render what they decided.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from console.lists import is_htmx
from payouts import selectors
from payouts.errors import REFUSALS, PayoutActionRefused, refusal_text
from payouts.models import Payout
from payouts.pages import payout_of_request
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.release.initiation import payout_retry
from payouts.release.step import otp_step
from payouts.release.step_context import OtpForm, release_step_context
from payouts.views import forbidden_page, live_action, refused_as_person
from staff.requests import staff_of
from staff.step_up import StepUpRequired

STEP_TEMPLATE = "payouts/includes/release_step.html"


def _step(request: HttpRequest, pk: int, **context: Any) -> HttpResponse:
    """The step fragment (HTMX), or back to the payout page with the outcome as a message."""
    step_ok, step_error = context.pop("step_ok", ""), context.pop("step_error", "")
    status = context.pop("status", 200)  # 403: the person was refused (refused_as_person)
    if not is_htmx(request):
        if step_error:
            messages.error(request, step_error)
        elif step_ok:
            messages.success(request, step_ok)
        if status == 403:
            return forbidden_page(request, pk)
        return redirect("payouts:detail", pk=pk)
    payout = payout_of_request(request, pk)  # fresh: after the action
    context = {"payout": payout, **release_step_context(request, payout, **context)}
    context = {**context, "step_ok": step_ok, "step_error": step_error}
    return render(request, STEP_TEMPLATE, context, status=status)


@login_required
def otp_step_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The step alone, re-read when its countdown reaches zero (the server says "expired")."""
    selectors.require_payout_reader(staff_of(request))
    payout_of_request(request, pk)
    return _step(request, pk)


@require_POST
@login_required
def otp_send_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Send a code (or a new one, which replaces the previous code) and answer with the step."""
    payout = payout_of_request(request, pk)
    try:
        payout_otp_send(payout=payout, by=staff_of(request))
    except REFUSALS as exc:
        status = 403 if refused_as_person(exc) else 200
        return _step(request, pk, step_error=refusal_text(exc), status=status)
    step = otp_step(Payout.objects.select_related("environment").get(pk=pk))
    ok = gettext("Code sent.")
    if step is not None and step.codes_sent > 1:
        ok = gettext("New code sent: it replaces the previous code, which no longer works.")
    return _step(request, pk, step_ok=ok, focus=True)


@require_POST
@login_required
def otp_confirm_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Enter the code: the step answers, and re-reads the live region when the payout moved."""
    payout = payout_of_request(request, pk)
    form = OtpForm(request.POST)
    error, status = "", 200
    if form.is_valid():
        try:
            payout_otp_confirm(payout=payout, by=staff_of(request), code=form.cleaned_data["code"])
        except StepUpRequired:
            raise  # staff.middleware.StepUpMiddleware sends the person to the step-up prompt
        except REFUSALS as exc:
            if isinstance(exc, PayoutActionRefused) and exc.field == "code":
                exc.add_to_form(form)
            else:
                error = refusal_text(exc)
                status = 403 if refused_as_person(exc) else 200
        else:
            ok = gettext("Code entered: sending the payout.")
            return _step(request, pk, step_ok=ok, focus=True, reread_region=True)
    return _step(request, pk, otp_form=form, step_error=error, focus=True, status=status)


@require_POST
@login_required
def resend_view(request: HttpRequest, pk: int) -> HttpResponse:
    ok = gettext("Re-sending with the same idempotency key.")
    return live_action(request, pk, lambda p, by: payout_retry(payout=p, by=by), ok)
