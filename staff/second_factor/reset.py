"""An admin resets a person's second factor (lost phone): an admin change (staff.changes).

- The requester is an admin (role admin, or a superuser) who has just stepped up.
- Another admin (never the requester, never the person reset) approves the proposal; with a
  single admin in the system it applies after PAYOPS_ADMIN_CHANGE_WAIT_HOURS, every admin emailed.
- Nobody resets their own second factor alone (the break-glass command is for that).
- Applying it deletes the person's authenticator apps, passkeys and recovery codes and ends
  every session they hold (StaffUser.session_epoch): they enrol again at their next sign-in.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from django_otp_webauthn.models import WebAuthnCredential

from staff.actions import record_action  # no live page for these records: announce=False
from staff.changes import admins, change_approve, change_propose
from staff.errors import ServiceError
from staff.models import ChangeProposal, StaffUser
from staff.roles import ADMIN
from staff.second_factor.models import (
    AuthenticatorDevice,
    RecoveryCodeDevice,
    SecondFactorReset,
)
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
    record_action(
        actor=by,
        action="staff.second_factor_reset_applied",
        target=target,
        details={"reset": reset.pk, "how": how, "removed": removed, "sessions_ended": True},
        announce=False,
    )


RESET_KIND = "staff.second_factor_reset"


def second_factor_reset_request(
    *, target: StaffUser, by: StaffUser, reason: str = ""
) -> ChangeProposal:
    """Propose clearing `target`'s second factor: an admin change (staff.changes), so another
    admin approves it, or, where `by` is the only admin, it applies after the wait."""
    if not is_admin(by):
        raise ResetRefused(
            gettext("Only an admin may reset a second factor."), code="permission_denied"
        )
    step_up_require(by, action="second_factor.reset")
    others = [admin for admin in admins() if admin.pk != by.pk]
    if target.pk == by.pk and not others:
        raise ResetRefused(
            gettext(
                "You cannot reset your own second factor alone: ask another admin, or use the "
                "break-glass command on the server (manage.py second_factor_reset)."
            )
        )
    return change_propose(
        kind=RESET_KIND,
        by=by,
        target=target,
        target_label=target.email,
        summary=f"Reset the second factor of {target.email}",
        before={"second_factor": "enrolled"},
        after={"second_factor": "cleared; they enrol again and their sessions end"},
        payload={"target": target.pk, "reason": reason[:200]},
    )


def reset_version(proposal: ChangeProposal) -> str:
    """A reset of a person whose sessions were ended since (another reset) is stale."""
    epoch = StaffUser.objects.filter(pk=proposal.payload["target"]).values_list(
        "session_epoch", flat=True
    )
    return str(next(iter(epoch), "gone"))


def reset_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    """Apply an approved reset proposal (staff.change_kinds registers this)."""
    reset = SecondFactorReset.objects.create(
        target_id=proposal.payload["target"],
        requested_by=proposal.proposed_by,
        requested_at=proposal.proposed_at,
        confirmed_by=by,
        reason=str(proposal.payload.get("reason", ""))[:200],
    )
    how = (
        "confirmed by a second admin" if by is not None else "single admin: applied after the wait"
    )
    _apply(reset, by=by, how=how)


def second_factor_reset_confirm(*, proposal: ChangeProposal, by: StaffUser) -> ChangeProposal:
    """A second admin (not the requester, not the person reset) confirms; it applies now."""
    if not is_admin(by):
        raise ResetRefused(gettext("Only an admin may confirm a reset."), code="permission_denied")
    if proposal.kind != RESET_KIND:
        raise ResetRefused(gettext("This is not a second-factor reset."), code="not_found")
    return change_approve(proposal=proposal, by=by)


def second_factor_reset_break_glass(*, target: StaffUser, reason: str) -> SecondFactorReset:
    """The server-side command's reset (no admin can sign in): applied at once, audited as such."""
    with transaction.atomic():
        SecondFactorReset.objects.filter(
            target=target, status=SecondFactorReset.Status.PENDING
        ).update(status=SecondFactorReset.Status.CANCELLED)
        reset = SecondFactorReset.objects.create(target=target, requested_by=None, reason=reason)
        record_action(
            actor=None,
            action="staff.second_factor_reset_requested",
            target=target,
            details={"reset": reset.pk, "reason": reason, "break_glass": True},
            announce=False,
        )
        _apply(reset, by=None, how="break-glass command on the server")
    return reset


def pending_resets() -> list[ChangeProposal]:
    """Reset proposals waiting for a second admin (or their wait)."""
    query = ChangeProposal.objects.filter(kind=RESET_KIND, state=ChangeProposal.State.PENDING)
    return list(query.select_related("proposed_by").order_by("proposed_at"))
