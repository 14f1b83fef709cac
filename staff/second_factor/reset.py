"""An admin resets a person's second factor (lost phone): a second admin confirms where one exists.

- The requester is an admin (role admin, or a superuser) who has just stepped up.
- Where another active admin exists, the request waits for one of them (never the requester)
  to confirm; with a single admin in the system it applies at once, and the audit says so.
- Nobody resets their own second factor alone (the break-glass command is for that).
- Applying it deletes the person's authenticator apps, passkeys and recovery codes and ends
  every session they hold (StaffUser.session_epoch): they enrol again at their next sign-in.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_otp_webauthn.models import WebAuthnCredential

from staff.errors import ServiceError
from staff.models import StaffUser
from staff.roles import ADMIN
from staff.second_factor.models import (
    AuthenticatorDevice,
    RecoveryCodeDevice,
    SecondFactorReset,
)
from staff.services import audit_record
from staff.step_up import step_up_require


class ResetRefused(ServiceError):
    status = 403

    def __init__(self, message: str, *, code: str = "second_factor_reset_refused") -> None:
        super().__init__(message, code=code)


def is_admin(user: object) -> bool:
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    return bool(user.groups.filter(name=ADMIN.key).exists())  # type: ignore[attr-defined]


def admins() -> list[StaffUser]:
    """Every active admin (role admin or superuser)."""
    query = StaffUser.objects.filter(is_active=True).filter(
        Q(is_superuser=True) | Q(groups__name=ADMIN.key)
    )
    return list(query.distinct())


def _apply(reset: SecondFactorReset, *, by: StaffUser | None, how: str) -> None:
    target = StaffUser.objects.select_for_update().get(pk=reset.target_id)
    removed = {
        "totp": AuthenticatorDevice.objects.filter(user=target).delete()[0],
        "passkeys": WebAuthnCredential.objects.filter(user=target).delete()[0],
        "recovery_codes": RecoveryCodeDevice.objects.filter(user=target).delete()[0],
    }
    target.session_epoch += 1
    target.save(update_fields=["session_epoch"])
    reset.status = SecondFactorReset.Status.APPLIED
    reset.applied_at = timezone.now()
    reset.save(update_fields=["status", "applied_at", "confirmed_by"])
    audit_record(
        actor=by,
        action="staff.second_factor_reset_applied",
        target=target,
        details={"reset": reset.pk, "how": how, "removed": removed, "sessions_ended": True},
    )


def second_factor_reset_request(
    *, target: StaffUser, by: StaffUser, reason: str = ""
) -> SecondFactorReset:
    """Ask to clear `target`'s second factor; applied now only where `by` is the only admin."""
    if not is_admin(by):
        raise ResetRefused("Only an admin may reset a second factor.", code="permission_denied")
    step_up_require(by, action="second_factor.reset")
    others = [admin for admin in admins() if admin.pk != by.pk]
    if target.pk == by.pk and not others:
        raise ResetRefused(
            "You cannot reset your own second factor alone: ask another admin, or use the "
            "break-glass command on the server (manage.py second_factor_reset)."
        )
    with transaction.atomic():
        if SecondFactorReset.objects.filter(
            target=target, status=SecondFactorReset.Status.PENDING
        ).exists():
            raise ResetRefused(
                f"A reset of {target.email} is already waiting for a second admin.",
                code="second_factor_reset_pending",
            )
        reset = SecondFactorReset.objects.create(
            target=target, requested_by=by, reason=reason[:200]
        )
        audit_record(
            actor=by,
            action="staff.second_factor_reset_requested",
            target=target,
            details={"reset": reset.pk, "reason": reason, "needs_second_admin": bool(others)},
        )
        if not others:
            _apply(reset, by=by, how="single admin: applied at once, no second admin exists")
    return reset


def second_factor_reset_confirm(*, reset: SecondFactorReset, by: StaffUser) -> SecondFactorReset:
    """A second admin (not the requester, not the person reset) confirms; it applies now."""
    if not is_admin(by):
        raise ResetRefused("Only an admin may confirm a reset.", code="permission_denied")
    step_up_require(by, action="second_factor.reset")
    with transaction.atomic():
        reset = SecondFactorReset.objects.select_for_update().get(pk=reset.pk)
        if reset.status != SecondFactorReset.Status.PENDING:
            raise ResetRefused("This reset is no longer waiting.", code="second_factor_reset_done")
        if reset.requested_by_id == by.pk:
            raise ResetRefused(
                "A second admin must confirm: you requested this reset yourself.",
                code="second_factor_reset_own_request",
            )
        if reset.target_id == by.pk:
            raise ResetRefused(
                "Another admin must confirm a reset of your own second factor.",
                code="second_factor_reset_self",
            )
        reset.confirmed_by = by
        _apply(reset, by=by, how="confirmed by a second admin")
    return reset


def second_factor_reset_break_glass(*, target: StaffUser, reason: str) -> SecondFactorReset:
    """The server-side command's reset (no admin can sign in): applied at once, audited as such."""
    with transaction.atomic():
        SecondFactorReset.objects.filter(
            target=target, status=SecondFactorReset.Status.PENDING
        ).update(status=SecondFactorReset.Status.CANCELLED)
        reset = SecondFactorReset.objects.create(target=target, requested_by=None, reason=reason)
        audit_record(
            actor=None,
            action="staff.second_factor_reset_requested",
            target=target,
            details={"reset": reset.pk, "reason": reason, "break_glass": True},
        )
        _apply(reset, by=None, how="break-glass command on the server")
    return reset


def pending_resets() -> list[SecondFactorReset]:
    query = SecondFactorReset.objects.filter(status=SecondFactorReset.Status.PENDING)
    return list(query.select_related("target", "requested_by"))
