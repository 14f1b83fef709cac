"""The release step on the payout page: send the code, enter it, resend; its HTMX fragments.

The step (`templates/payouts/includes/release_step.html`, `#release-step`) is part of the
payout's live region and answers its own actions with itself. A confirmed code moved the payout
(its status, its timeline), so that answer also re-reads the whole region once it is in the
page: a swap never aims at a region that a live refresh replaced meanwhile. The services decide
(`payouts.otp`, `payouts.otp_step`); these views only render what they decided.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.lists import is_htmx
from gateway.selectors import environment_current
from payouts import selectors
from payouts.code_hints import code_hint_for
from payouts.errors import REFUSALS, PayoutActionRefused, refusal_text
from payouts.models import Payout
from payouts.otp import payout_otp_confirm, payout_otp_send
from payouts.otp_step import LABELS, OtpState, otp_step
from staff.requests import staff_of
from staff.roles import PAYOUT_APPROVE

STEP_TEMPLATE = "payouts/includes/release_step.html"


class OtpForm(forms.Form):
    code = forms.CharField(
        min_length=6,
        max_length=6,
        label="Verification code",
        help_text="The 6 digits from the newest email.",
        widget=forms.TextInput(
            attrs={"inputmode": "numeric", "autocomplete": "one-time-code", "pattern": r"\d{6}"}
        ),
    )


def release_step_context(
    request: HttpRequest,
    payout: Payout,
    *,
    otp_form: OtpForm | None = None,
    focus: bool = False,
    reread_region: bool = False,
) -> dict[str, Any]:
    """What the step shows this person: the state, the forms if they may release, any hint."""
    user = staff_of(request)
    step = otp_step(payout)
    can_release = step is not None and user.has_perm(PAYOUT_APPROVE) and user.pk != payout.maker_id
    form = otp_form or OtpForm()
    if focus:  # after the approver's own action: keyboard focus goes where they type next
        form.fields["code"].widget.attrs["autofocus"] = True
    checking_since = payout.submitting_since or timezone.now()
    return {
        "otp_step": step,
        "otp_state_label": LABELS[step.state] if step else "",
        "can_release": can_release,
        "is_maker": user.pk == payout.maker_id,
        # Offered only to whoever may enter it, and only while a code can still work.
        "code_hint": code_hint_for(payout) if can_release and step and step.can_confirm else None,
        "otp_form": form,
        # While the upstream checks the code the step re-reads the region, for as long as a
        # payout is expected to wait there (the recovery schedule takes over after that).
        "otp_reread_region": reread_region,
        "otp_checking_poll": step is not None
        and step.state == OtpState.CHECKING
        and (timezone.now() - checking_since).total_seconds()
        < settings.PAYOUTS_SUBMITTING_STALE_SECONDS,
    }


def _payout(request: HttpRequest, pk: int) -> Payout:
    try:
        return selectors.payout_detail(environment=environment_current(user=request.user), pk=pk)
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None


def _step(request: HttpRequest, pk: int, **context: Any) -> HttpResponse:
    """The step fragment (HTMX), or back to the payout page with the outcome as a message."""
    step_ok, step_error = context.pop("step_ok", ""), context.pop("step_error", "")
    if not is_htmx(request):
        if step_error:
            messages.error(request, step_error)
        elif step_ok:
            messages.success(request, step_ok)
        return redirect("payouts:detail", pk=pk)
    payout = _payout(request, pk)  # fresh: after the action
    context = {"payout": payout, **release_step_context(request, payout, **context)}
    return render(request, STEP_TEMPLATE, {**context, "step_ok": step_ok, "step_error": step_error})


@login_required
def otp_step_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The step alone, re-read when its countdown reaches zero (the server says "expired")."""
    selectors.require_payout_reader(staff_of(request))
    _payout(request, pk)
    return _step(request, pk)


@require_POST
@login_required
def otp_send_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Send a code (or a new one, which replaces the previous code) and answer with the step."""
    payout = _payout(request, pk)
    try:
        payout_otp_send(payout=payout, by=staff_of(request))
    except REFUSALS as exc:
        return _step(request, pk, step_error=refusal_text(exc))
    step = otp_step(Payout.objects.select_related("environment").get(pk=pk))
    ok = "Code sent."
    if step is not None and step.codes_sent > 1:
        ok = "New code sent: it replaces the previous code, which no longer works."
    return _step(request, pk, step_ok=ok, focus=True)


@require_POST
@login_required
def otp_confirm_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Enter the code: the step answers, and re-reads the live region when the payout moved."""
    payout = _payout(request, pk)
    form = OtpForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            payout_otp_confirm(payout=payout, by=staff_of(request), code=form.cleaned_data["code"])
        except REFUSALS as exc:
            if isinstance(exc, PayoutActionRefused) and exc.field == "code":
                exc.add_to_form(form)
            else:
                error = refusal_text(exc)
        else:
            ok = "Code entered: sending the payout."
            return _step(request, pk, step_ok=ok, focus=True, reread_region=True)
    return _step(request, pk, otp_form=form, step_error=error, focus=True)
