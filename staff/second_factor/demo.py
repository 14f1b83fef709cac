"""The demo staff's authenticator codes: seeded enrolled, their current code shown where demo
staff exist (settings.PAYOPS_SEED_DEMO_STAFF: local and test only, never production)."""

from __future__ import annotations

from django.conf import settings

from staff.models import StaffUser
from staff.roles import demo_logins_declared
from staff.second_factor.devices import enrolment_required
from staff.second_factor.models import AuthenticatorDevice
from staff.second_factor.totp import totp_current_code

DEMO_DEVICE_NAME = "Demo authenticator"


def demo_totp_enrol(user: StaffUser) -> AuthenticatorDevice | None:
    """Give a demo user whose role needs a second factor a confirmed authenticator (once)."""
    if not settings.PAYOPS_SEED_DEMO_STAFF or not enrolment_required(user):
        return None
    device = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first()
    if device is None:
        device = AuthenticatorDevice.objects.create(
            user=user, name=DEMO_DEVICE_NAME, confirmed=True
        )
    return device


def demo_code_hint(user: object) -> str | None:
    """A demo person's current code, where demo staff exist; None for anyone else, anywhere else."""
    if not settings.PAYOPS_SEED_DEMO_STAFF:
        return None
    email = getattr(user, "email", None)
    if not email or email not in {email for _, email in demo_logins_declared()}:
        return None
    device = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first()
    return totp_current_code(device) if device else None


def demo_codes() -> dict[str, str]:
    """email -> current code of each enrolled demo login (the sign-in page's demo panel)."""
    if not settings.PAYOPS_SEED_DEMO_STAFF:
        return {}
    emails = {email for _, email in demo_logins_declared()}
    devices = AuthenticatorDevice.objects.filter(user__email__in=emails, confirmed=True)
    return {d.user.email: totp_current_code(d) for d in devices.select_related("user")}
