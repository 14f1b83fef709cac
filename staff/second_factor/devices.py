"""Who has which second factor, and who must enrol one (settings.PAYOPS_SECOND_FACTOR_ROLES)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from django.conf import settings
from django.utils.translation import gettext_lazy
from django_otp.models import Device
from django_otp_webauthn.models import WebAuthnCredential

from staff.models import StaffUser
from staff.roles import user_roles
from staff.second_factor.models import AuthenticatorDevice, RecoveryCodeDevice

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


Kind = Literal["totp", "passkey"]
KIND_LABELS: dict[str, StrOrPromise] = {
    "totp": gettext_lazy("Authenticator app"),
    "passkey": "Passkey",
}


def enrolment_required(user: StaffUser) -> bool:
    """Whether the person must have a second factor: a superuser, or a role that requires one."""
    if user.is_superuser:
        return True
    required = set(settings.PAYOPS_SECOND_FACTOR_ROLES)
    return any(role.key in required for role in user_roles(user))


def second_factor_devices(user: StaffUser) -> list[Device]:
    """The person's confirmed TOTP apps and passkeys (recovery codes are not a device to list)."""
    totp = list(AuthenticatorDevice.objects.filter(user=user, confirmed=True).order_by("id"))
    passkeys = list(WebAuthnCredential.objects.filter(user=user, confirmed=True).order_by("id"))
    return [*totp, *passkeys]


def has_second_factor(user: StaffUser) -> bool:
    return (
        AuthenticatorDevice.objects.filter(user=user, confirmed=True).exists()
        or WebAuthnCredential.objects.filter(user=user, confirmed=True).exists()
    )


def recovery_device(user: StaffUser) -> RecoveryCodeDevice | None:
    return RecoveryCodeDevice.objects.filter(user=user, confirmed=True).first()


def device_kind(device: Device) -> Kind:
    return "passkey" if isinstance(device, WebAuthnCredential) else "totp"


@dataclass(frozen=True)
class DeviceRow:
    """One line of the profile's "Sign-in security" list."""

    pk: int
    kind: Kind
    kind_label: str
    name: str
    created_at: datetime | None
    last_used_at: datetime | None


def device_rows(user: StaffUser) -> list[DeviceRow]:
    rows = []
    for device in second_factor_devices(user):
        kind = device_kind(device)
        rows.append(
            DeviceRow(
                pk=device.pk,
                kind=kind,
                kind_label=str(KIND_LABELS[kind]),
                name=device.name or str(KIND_LABELS[kind]),
                created_at=getattr(device, "created_at", None),
                last_used_at=getattr(device, "last_used_at", None),
            )
        )
    return rows


def device_of(user: StaffUser, kind: str, pk: int) -> Device | None:
    """The person's own confirmed device of that kind (None: no such device of theirs)."""
    for device in second_factor_devices(user):
        if device_kind(device) == kind and device.pk == pk:
            return device
    return None
