"""The second-factor pages: the sign-in's second step, enrolment, recovery codes, step-up, the
profile's device actions and the admins' reset page. Thin: the rules are in the services."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from staff.changes import proposal_message
from staff.errors import ServiceError
from staff.models import ChangeProposal, StaffUser
from staff.second_factor.demo import demo_code_hint
from staff.second_factor.devices import (
    device_kind,
    device_of,
    enrolment_required,
    has_second_factor,
    second_factor_devices,
)
from staff.second_factor.forms import CodeForm, ResetRequestForm, TotpConfirmForm
from staff.second_factor.reset import (
    RESET_KIND,
    is_admin,
    pending_resets,
    second_factor_reset_confirm,
    second_factor_reset_request,
)
from staff.second_factor.state import sign_in_state
from staff.second_factor.totp import totp_pending, totp_qr_svg, totp_secret
from staff.second_factor.verification import (
    NEW_RECOVERY_CODES_SESSION_KEY,
    Purpose,
    Verified,
    recovery_codes_regenerate,
    second_factor_remove,
    second_factor_verify,
    totp_confirm,
)
from staff.step_up import StepUpRequired, step_up_fresh, step_up_minutes


def _next(request: HttpRequest, default: str = "") -> str:
    """The ?next= (or posted next) if it is a path on this site; else `default` (or dashboard)."""
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return default or reverse("console:dashboard")


# Pages of an unfinished sign-in show no menu: its links would only lead back here.
_NO_MENU: dict[str, object] = {"nav_dashboard": None, "nav_sections": []}


def _to_step_up(next_path: str) -> HttpResponse:
    return HttpResponseRedirect(f"{reverse('staff:step_up')}?{urlencode({'next': next_path})}")


def _user(request: HttpRequest) -> StaffUser:
    return request.user  # type: ignore[return-value]


def _after_code(request: HttpRequest, result: Verified) -> None:
    if result.recovery_codes_left is not None:
        left = result.recovery_codes_left
        level = messages.WARNING if left <= 2 else messages.INFO
        text = gettext("Recovery code used; %(left)s left.") % {"left": left}
        if left <= 2:
            text += " " + gettext("Make new ones on your profile page.")
        messages.add_message(
            request,
            level,
            text,
        )


def _code_page(request: HttpRequest, *, purpose: Purpose, template: str) -> HttpResponse:
    user = _user(request)
    form = CodeForm(request.POST or None)
    next_url = _next(request)
    if request.method == "POST" and form.is_valid():
        try:
            result = second_factor_verify(request, code=form.cleaned_data["code"], purpose=purpose)
        except ServiceError as exc:
            exc.add_to_form(form)
        else:
            _after_code(request, result)
            return HttpResponseRedirect(next_url)
    devices = second_factor_devices(user)
    return render(
        request,
        template,
        {
            "form": form,
            "next": next_url,
            "has_passkey": any(device_kind(d) == "passkey" for d in devices),
            "has_second_factor": bool(devices),
            "demo_code": demo_code_hint(user),
            "step_up_minutes": step_up_minutes(),
            **(_NO_MENU if purpose == "sign_in" else {}),
        },
    )


@login_required
def second_factor(request: HttpRequest) -> HttpResponse:
    """Sign-in's second step: an authenticator code, a passkey, or a recovery code."""
    if sign_in_state(request.user, request.session) != "verify":
        return HttpResponseRedirect(_next(request))
    return _code_page(request, purpose="sign_in", template="staff/second_factor.html")


@login_required
def step_up(request: HttpRequest) -> HttpResponse:
    """Confirm it is you again before a sensitive action, then go back to it (?next=)."""
    return _code_page(request, purpose="step_up", template="staff/step_up.html")


@login_required
def enrol(request: HttpRequest) -> HttpResponse:
    """Set up an authenticator app (QR code + secret) or a passkey."""
    user = _user(request)
    required = enrolment_required(user) and not has_second_factor(user)
    if has_second_factor(user) and not step_up_fresh(user):
        # Adding a device to an enrolled account needs a fresh second factor.
        return _to_step_up(request.get_full_path())
    device = totp_pending(user)
    return render(
        request,
        "staff/enrol.html",
        {
            "form": TotpConfirmForm(),
            "qr_svg": totp_qr_svg(device),
            "secret": totp_secret(device),
            "next": _next(request),
            "required": required,
            **(_NO_MENU if required else {}),
        },
    )


@login_required
@require_POST
def enrol_totp(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    device = totp_pending(user)
    form = TotpConfirmForm(request.POST)
    required = enrolment_required(user) and not has_second_factor(user)
    if form.is_valid():
        try:
            totp_confirm(request, device=device, code=form.cleaned_data["code"])
        except StepUpRequired:
            # Back to enrolment after the prompt, still headed where the person was going.
            return _to_step_up(f"{reverse('staff:enrol')}?{urlencode({'next': _next(request)})}")
        except ServiceError as exc:
            exc.add_to_form(form)
        else:
            messages.success(request, gettext("Your authenticator app is set up."))
            return _after_enrolment(request)
    return render(
        request,
        "staff/enrol.html",
        {
            "form": form,
            "qr_svg": totp_qr_svg(device),
            "secret": totp_secret(device),
            "next": _next(request),
            "required": required,
            **(_NO_MENU if required else {}),
        },
        status=400,
    )


def _after_enrolment(request: HttpRequest) -> HttpResponse:
    if request.session.get(NEW_RECOVERY_CODES_SESSION_KEY):
        target = reverse("staff:recovery_codes")
        return HttpResponseRedirect(f"{target}?{urlencode({'next': _next(request)})}")
    return HttpResponseRedirect(_next(request, reverse("profile:profile")))


@login_required
def enrol_passkey_done(request: HttpRequest) -> HttpResponse:
    """Where the page goes once the browser registered a passkey (static/js/passkeys.js)."""
    if not has_second_factor(_user(request)):
        return redirect("staff:enrol")
    messages.success(request, gettext("Your passkey is set up."))
    return _after_enrolment(request)


@login_required
def recovery_codes(request: HttpRequest) -> HttpResponse:
    """The recovery codes just issued, shown once (then gone from the session)."""
    codes = request.session.pop(NEW_RECOVERY_CODES_SESSION_KEY, None)
    if request.method == "POST":
        try:
            codes = recovery_codes_regenerate(request)
        except StepUpRequired:
            return _to_step_up(reverse("profile:profile"))
        except ServiceError as exc:
            messages.error(request, exc.as_message())
            return redirect("profile:profile")
    if not codes:
        return redirect("profile:profile")
    return render(
        request,
        "staff/recovery_codes.html",
        {"codes": codes, "next": _next(request, reverse("profile:profile"))},
    )


@login_required
@require_POST
def device_remove(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    device = device_of(_user(request), kind, pk)
    if device is None:
        raise PermissionDenied
    try:
        second_factor_remove(request, device=device)
    except StepUpRequired:
        return _to_step_up(reverse("profile:profile"))
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        messages.success(request, f"{device.name} removed.")
    return redirect("profile:profile")


@login_required
def resets(request: HttpRequest) -> HttpResponse:
    """Admins: reset a person's second factor; confirm another admin's pending request."""
    user = _user(request)
    if not is_admin(user):
        raise PermissionDenied
    form = ResetRequestForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            reset = second_factor_reset_request(
                target=form.cleaned_data["target"], by=user, reason=form.cleaned_data["reason"]
            )
        except StepUpRequired:
            return _to_step_up(reverse("staff:second_factor_resets"))
        except ServiceError as exc:
            exc.add_to_form(form)
        else:
            # An admin change (staff.changes): another admin confirms, or the single-admin wait.
            messages.success(request, proposal_message(reset))
            return redirect("staff:second_factor_resets")
    return render(
        request,
        "staff/second_factor_resets.html",
        {"form": form, "pending": pending_resets()},
    )


@login_required
@require_POST
def reset_confirm(request: HttpRequest, pk: int) -> HttpResponse:
    user = _user(request)
    if not is_admin(user):
        raise PermissionDenied
    proposal = get_object_or_404(ChangeProposal, pk=pk, kind=RESET_KIND)
    try:
        proposal = second_factor_reset_confirm(proposal=proposal, by=user)
    except StepUpRequired:
        return _to_step_up(reverse("staff:second_factor_resets"))
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        if proposal.state == ChangeProposal.State.APPLIED:
            messages.success(
                request,
                gettext("Second factor of %(target_label)s reset; their sessions ended.")
                % {"target_label": proposal.target_label},
            )
        else:
            messages.error(request, proposal_message(proposal))
    return redirect("staff:second_factor_resets")
