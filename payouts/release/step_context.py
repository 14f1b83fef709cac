"""What the release step shows one person: the code's state, the forms if they may release."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy

from payouts.models import Payout
from payouts.release.code_hints import code_hint_for
from payouts.release.step import LABELS, OtpState, otp_step
from staff.requests import staff_of
from staff.roles import PAYOUT_APPROVE


class OtpForm(forms.Form):
    code = forms.CharField(
        min_length=6,
        max_length=6,
        label=gettext_lazy("Verification code"),
        help_text=gettext_lazy("The 6 digits from the newest email."),
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
