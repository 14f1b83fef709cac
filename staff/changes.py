"""Maker-checker on admin changes: one admin proposes, another approves (docs/admin-changes.md).

Each owning app registers its kinds of change from its AppConfig.ready():

    from staff.changes import register_change_kind
    register_change_kind("environment.credentials", apply=..., version=..., label="...")

and its page, API endpoint or service proposes one with `change_propose(...)`, giving what a
person reads (summary, before, after: never a secret) and what applying needs (payload: secrets
encrypted by the owning app). The rules live here, once:

- proposing and deciding need an admin (admin role or superuser) with a fresh second factor;
- the approver is another admin than the proposer; approving applies the change in one
  transaction through the kind's `apply` (the owning app's service), whose audit entries carry the
  proposal, its proposer and its approver (`staff.audit.audit_context`);
- where no other active admin exists, the proposal waits `PAYOPS_ADMIN_CHANGE_WAIT_HOURS` and
  every admin is emailed; `changes_apply_due` (a schedule) then applies it as the system;
- the proposer may withdraw; applying re-reads the target's version and fails the proposal
  (state `failed`, with why) when it changed since the proposal;
- `PAYOPS_ADMIN_MAKER_CHECKER=false` applies a proposal at once (audited the same way).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext

from staff import crypto
from staff.actions import record_action  # no live page for these records: announce=False
from staff.audit import audit_context
from staff.errors import ServiceError
from staff.models import ChangeProposal, StaffUser
from staff.roles import ADMIN, may_grant_roles
from staff.step_up import step_up_require

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

logger = logging.getLogger("staff.changes")

STEP_UP_ACTION = "admin_change"


@dataclass(frozen=True)
class ChangeKind:
    """How one kind of admin change is applied, and how its target's version is read."""

    kind: str
    label: StrOrPromise
    # apply(proposal, by=approver or None for the system) makes the change with the owning
    # app's service, inside the approval's transaction; a ServiceError fails the proposal.
    apply: Callable[..., Any]
    # version(proposal) is the target's version now (compared with the one proposed).
    version: Callable[[ChangeProposal], str]
    # False for a change that calls the upstream (which never happens inside a transaction): the
    # approval commits first (state `approved`), then `apply` runs and the state follows it.
    in_transaction: bool = True
    # The payload's keys holding secrets encrypted with staff.crypto (a ciphertext, or dicts and
    # lists of them): key rotation re-encrypts them, so a pending proposal outlives an old key.
    secret_keys: tuple[str, ...] = ()


CHANGE_KINDS: dict[str, ChangeKind] = {}


def register_change_kind(
    kind: str,
    *,
    apply: Callable[..., Any],
    version: Callable[[ChangeProposal], str],
    label: StrOrPromise,
    in_transaction: bool = True,
    secret_keys: tuple[str, ...] = (),
) -> None:
    """Declare a kind of admin change (from the owning app's ready(); once per kind), and which
    keys of its payload hold encrypted secrets (`secret_keys`)."""
    existing = CHANGE_KINDS.get(kind)
    if existing is not None and (existing.apply, existing.version) != (apply, version):
        raise ImproperlyConfigured(f"The change kind {kind!r} is already registered.")
    CHANGE_KINDS[kind] = ChangeKind(
        kind=kind,
        label=label,
        apply=apply,
        version=version,
        in_transaction=in_transaction,
        secret_keys=secret_keys,
    )


def proposal_secrets_rotate(proposal: ChangeProposal, rotate: Callable[[str], str]) -> list[str]:
    """Re-encrypt, with `rotate`, the secrets of a proposal's payload its kind declared
    (`secret_keys`), in place; ["payload"] when any was (staff.crypto's row rotator)."""
    spec = CHANGE_KINDS.get(proposal.kind)
    if spec is None or not spec.secret_keys or not isinstance(proposal.payload, dict):
        return []
    payload = dict(proposal.payload)
    count = 0
    for key in spec.secret_keys:
        if key in payload:
            payload[key], n = crypto.reencrypt_nested(payload[key], rotate)
            count += n
    if not count:
        return []
    proposal.payload = payload
    return ["payload"]


def change_kind(kind: str) -> ChangeKind:
    try:
        return CHANGE_KINDS[kind]
    except KeyError:
        raise ImproperlyConfigured(f"No change kind {kind!r} is registered.") from None


class ChangeRefused(ServiceError):
    status = 403

    def __init__(self, message: str, *, code: str = "change_refused", status: int = 403) -> None:
        super().__init__(message, code=code, status=status)


def maker_checker_on() -> bool:
    return bool(getattr(settings, "PAYOPS_ADMIN_MAKER_CHECKER", True))


def wait_hours() -> int:
    return int(getattr(settings, "PAYOPS_ADMIN_CHANGE_WAIT_HOURS", 24))


def admins() -> list[StaffUser]:
    """Every active admin (admin role or superuser)."""
    query = StaffUser.objects.filter(is_active=True).filter(
        Q(is_superuser=True) | Q(groups__name=ADMIN.key)
    )
    return list(query.distinct().order_by("pk"))


def _proposed_email(proposal: ChangeProposal, *, by_email: str, label: object) -> tuple[str, str]:
    """The admins' email about a new proposal, in the active language (the summary, a record
    written when the change was proposed, is quoted as written)."""
    if proposal.apply_after:
        when = gettext(
            "It applies at %(at)s UTC unless another admin decides first (no other admin "
            "exists to approve it)."
        ) % {"at": f"{proposal.apply_after:%Y-%m-%d %H:%M}"}
    else:
        when = gettext("It waits for another admin to approve or reject it.")
    subject = gettext("PayOps: admin change proposed (%(kind)s)") % {"kind": label}
    body = gettext(
        "%(email)s proposed: %(summary)s\n\n%(when)s\n\nDecide it on the Changes page."
    ) % {"email": by_email, "summary": proposal.summary, "when": when}
    return subject, body


def _applied_email(proposal: ChangeProposal) -> tuple[str, str]:
    subject = gettext("PayOps: admin change applied after the wait")
    body = gettext("Applied: %(summary)s (proposed by %(email)s).") % {
        "summary": proposal.summary,
        "email": proposal.proposed_by.email,
    }
    return subject, body


def _require_admin(by: Any, *, what: str) -> None:
    if not may_grant_roles(by):
        raise ChangeRefused(
            gettext("Only an admin may %(what)s an admin change.") % {"what": what},
            code="permission_denied",
        )
    step_up_require(by, action=STEP_UP_ACTION)


def _email_admins(proposal_id: int, compose: Callable[[], tuple[str, str]]) -> None:
    """Email every active admin once the proposal has committed (the console backend locally),
    each in their own language: `compose` returns (subject, body) in the active language."""

    def send() -> None:
        for admin in admins():
            try:
                with translation.override(admin.language or settings.LANGUAGE_CODE):
                    subject, body = compose()
                send_mail(
                    subject=subject,
                    message=body,
                    from_email=settings.DEFAULT_FROM_EMAIL,
                    recipient_list=[admin.email],
                )
            except Exception:  # a mail outage never undoes a proposal; the inbox shows it
                logger.exception("admin change %s: email to %s failed", proposal_id, admin.pk)

    transaction.on_commit(send)


def _details(proposal: ChangeProposal) -> dict[str, Any]:
    return {
        "proposal": proposal.pk,
        "kind": proposal.kind,
        "summary": proposal.summary,
        "proposed_by": proposal.proposed_by.email,
    }


def _already_waiting(target_label: str) -> ChangeRefused:
    return ChangeRefused(
        gettext(
            "A change of this kind to %(value)s is already waiting: decide or withdraw it first."
        )
        % {"value": target_label or "this"},
        code="change_pending",
        status=409,
    )


def _target_key(target: models.Model | None, creates: str) -> tuple[str, str]:
    """The proposal's target type and id; a change that creates something is keyed by its name."""
    if target is not None:
        return target._meta.label_lower, str(target.pk)
    return "", f"new:{creates.casefold()}"[:100] if creates else ""


def _refuse_if_waiting(kind: str, target_type: str, target_id: str, *, target_label: str) -> None:
    """One change waits per kind and target."""
    if ChangeProposal.objects.filter(
        kind=kind,
        target_type=target_type,
        target_id=target_id,
        state=ChangeProposal.State.PENDING,
    ).exists():
        raise _already_waiting(target_label)


def _save_proposed(proposal: ChangeProposal, *, by: StaffUser, target_label: str) -> None:
    """Save a new proposal, waiting out `wait_hours()` when no other admin could approve it."""
    # Who could approve it: another admin, and not the person the change is about.
    about = proposal.target_id if proposal.target_type == StaffUser._meta.label_lower else None
    others = [a for a in admins() if a.pk != by.pk and str(a.pk) != about]
    if maker_checker_on() and not others:
        proposal.apply_after = timezone.now() + timedelta(hours=wait_hours())
    try:
        with transaction.atomic():
            proposal.save()
    except IntegrityError:  # another admin proposed the same at the same moment
        raise _already_waiting(target_label) from None


def change_propose(
    *,
    kind: str,
    by: StaffUser,
    summary: str,
    payload: dict[str, Any],
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    target: models.Model | None = None,
    target_label: str = "",
    creates: str = "",
) -> ChangeProposal:
    """Propose an admin change (an admin, stepped up). It waits for another admin, or, where
    none exists, `PAYOPS_ADMIN_CHANGE_WAIT_HOURS`; with maker-checker off it applies at once.

    One change waits per kind and target. A change that creates something has no target yet:
    `creates` names what it would create (e.g. a rule's name), so different new things may wait
    side by side while the same one cannot be proposed twice."""
    spec = change_kind(kind)
    _require_admin(by, what="propose")
    with transaction.atomic():
        target_type, target_id = _target_key(target, creates)
        _refuse_if_waiting(kind, target_type, target_id, target_label=target_label)
        proposal = ChangeProposal(
            kind=kind,
            target_type=target_type,
            target_id=target_id,
            target_label=target_label[:200],
            summary=summary[:300],
            before=before or {},
            after=after or {},
            payload=payload,
            proposed_by=by,
        )
        proposal.target_version = spec.version(proposal)
        _save_proposed(proposal, by=by, target_label=target_label)
        record_action(
            actor=by,
            action="change.proposed",
            target=proposal,
            details={
                **_details(proposal),
                "before": proposal.before,
                "after": proposal.after,
                "apply_after": proposal.apply_after,
            },
            announce=False,
        )
        if not maker_checker_on():
            how = "maker-checker is off (PAYOPS_ADMIN_MAKER_CHECKER)"
            _apply(proposal, by=by, how=how)
        else:
            _email_admins(
                proposal.pk, partial(_proposed_email, proposal, by_email=by.email, label=spec.label)
            )
    if not maker_checker_on():
        _apply_outside(proposal, by=by, how="maker-checker is off (PAYOPS_ADMIN_MAKER_CHECKER)")
    return proposal


def _decided(
    proposal: ChangeProposal,
    state: str,
    *,
    by: StaffUser | None,
    reason: str | None = None,
    at: datetime | None = None,
) -> None:
    """Move `proposal` to `state`, decided by `by` at `at` (now), with the reason if given."""
    proposal.state = state
    proposal.decided_by = by
    proposal.decided_at = at or timezone.now()
    fields = ["state", "decided_by", "decided_at"]
    if reason is not None:
        proposal.reason = reason[:500]
        fields.append("reason")
    proposal.save(update_fields=fields)


def _fail(proposal: ChangeProposal, why: str, *, by: StaffUser | None) -> None:
    _decided(proposal, ChangeProposal.State.FAILED, by=by, reason=why)
    record_action(
        actor=by,
        action="change.failed",
        target=proposal,
        details={**_details(proposal), "why": why},
        announce=False,
    )


# What the owning service may refuse with when the change applies: the proposal fails, with why.
REFUSALS = (ServiceError, ValidationError, PermissionDenied, ValueError)


def _why(exc: Exception) -> str:
    if isinstance(exc, ServiceError):
        return exc.as_message()
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return str(exc) or type(exc).__name__


def _context(proposal: ChangeProposal, *, by: StaffUser | None, how: str) -> dict[str, Any]:
    return {
        "change": {
            "proposal": proposal.pk,
            "proposed_by": proposal.proposed_by.email,
            "approved_by": by.email if by is not None else None,
            "how": how,
        }
    }


def _applied(proposal: ChangeProposal, *, by: StaffUser | None, how: str) -> None:
    _decided(proposal, ChangeProposal.State.APPLIED, by=by, at=proposal.decided_at)
    record_action(
        actor=by,
        action="change.applied",
        target=proposal,
        details={**_details(proposal), "approved_by": by.email if by else None, "how": how},
        announce=False,
    )


def _apply(proposal: ChangeProposal, *, by: StaffUser | None, how: str) -> bool:
    """Apply a locked pending proposal (inside the caller's transaction). False: it failed.

    A kind applied outside a transaction is only marked `approved` here: the caller runs
    `_apply_outside` once its transaction has committed."""
    spec = change_kind(proposal.kind)
    current = spec.version(proposal)
    if current != proposal.target_version:
        _fail(
            proposal,
            "The target changed after this was proposed (another change came first): "
            "propose again from what it is now.",
            by=by,
        )
        return False
    if not spec.in_transaction:
        _decided(proposal, ChangeProposal.State.APPROVED, by=by)
        return True
    try:
        with transaction.atomic(), audit_context(**_context(proposal, by=by, how=how)):
            spec.apply(proposal, by=by)
    except REFUSALS as exc:
        _fail(proposal, f"Applying it was refused: {_why(exc)}", by=by)
        return False
    _applied(proposal, by=by, how=how)
    return True


def _apply_outside(proposal: ChangeProposal, *, by: StaffUser | None, how: str) -> None:
    """Run an approved out-of-transaction kind (it calls the upstream), then record the outcome."""
    if proposal.state != ChangeProposal.State.APPROVED:
        return
    spec = change_kind(proposal.kind)
    try:
        with audit_context(**_context(proposal, by=by, how=how)):
            spec.apply(proposal, by=by)
    except REFUSALS as exc:
        with transaction.atomic():
            _fail(proposal, f"Applying it was refused: {_why(exc)}", by=by)
        return
    with transaction.atomic():
        _applied(proposal, by=by, how=how)


def _locked_pending(proposal: ChangeProposal) -> ChangeProposal:
    locked = (
        ChangeProposal.objects.select_for_update().select_related("proposed_by").get(pk=proposal.pk)
    )
    if not locked.is_pending:
        raise ChangeRefused(
            gettext("This change is no longer waiting (it is %(value)s).")
            % {"value": locked.get_state_display().lower()},
            code="change_decided",
            status=409,
        )
    return locked


def change_approve(*, proposal: ChangeProposal, by: StaffUser) -> ChangeProposal:
    """Another admin (stepped up) approves: the change applies now, or the proposal fails."""
    _require_admin(by, what="approve")
    with transaction.atomic():
        proposal = _locked_pending(proposal)
        if proposal.proposed_by_id == by.pk:
            raise ChangeRefused(
                gettext("Another admin must approve: you proposed this change yourself."),
                code="change_own_proposal",
            )
        if proposal.target_type == StaffUser._meta.label_lower and proposal.target_id == str(by.pk):
            raise ChangeRefused(
                gettext("Another admin must approve a change to your own access or second factor."),
                code="change_self",
            )
        _apply(proposal, by=by, how="approved by a second admin")
    _apply_outside(proposal, by=by, how="approved by a second admin")
    return proposal


def change_reject(*, proposal: ChangeProposal, by: StaffUser, reason: str) -> ChangeProposal:
    """Another admin rejects it, with a reason; nothing changes."""
    _require_admin(by, what="reject")
    reason = reason.strip()
    if not reason:
        raise ServiceError(
            gettext("Say why it is rejected."), errors=[("reason", gettext("is required"))]
        )
    with transaction.atomic():
        proposal = _locked_pending(proposal)
        if proposal.proposed_by_id == by.pk:
            raise ChangeRefused(
                gettext("Withdraw your own proposal instead of rejecting it."),
                code="change_own_proposal",
            )
        _decided(proposal, ChangeProposal.State.REJECTED, by=by, reason=reason)
        record_action(
            actor=by,
            action="change.rejected",
            target=proposal,
            details={**_details(proposal), "reason": reason},
            announce=False,
        )
    return proposal


def change_withdraw(*, proposal: ChangeProposal, by: StaffUser) -> ChangeProposal:
    """The proposer takes it back (no step-up: withdrawing changes nothing but the proposal)."""
    with transaction.atomic():
        proposal = _locked_pending(proposal)
        if proposal.proposed_by_id != by.pk:
            raise ChangeRefused(
                gettext("Only its proposer may withdraw a change."), code="permission_denied"
            )
        _decided(proposal, ChangeProposal.State.WITHDRAWN, by=by)
        record_action(
            actor=by,
            action="change.withdrawn",
            target=proposal,
            details=_details(proposal),
            announce=False,
        )
    return proposal


def changes_apply_due(*, now: datetime | None = None) -> int:
    """Apply, as the system, each pending proposal whose single-admin wait has ended (a
    schedule runs it every few minutes). Returns how many were applied."""
    now = now or timezone.now()
    due = ChangeProposal.objects.filter(
        state=ChangeProposal.State.PENDING, apply_after__isnull=False, apply_after__lte=now
    ).values_list("pk", flat=True)
    applied = 0
    for pk in list(due):
        with transaction.atomic():
            proposal = (
                ChangeProposal.objects.select_for_update(skip_locked=True)
                .select_related("proposed_by")
                .filter(pk=pk, state=ChangeProposal.State.PENDING)
                .first()
            )
            if proposal is None:
                continue
            how = f"no other admin: applied after the {wait_hours()}-hour wait"
            if not _apply(proposal, by=None, how=how):
                continue
        _apply_outside(proposal, by=None, how=how)
        if proposal.state == ChangeProposal.State.APPLIED:
            applied += 1
            with transaction.atomic():
                _email_admins(proposal.pk, partial(_applied_email, proposal))
    return applied


# --- Reading ------------------------------------------------------------------------------------


def changes_list(*, state: str = "", limit: int = 200) -> list[ChangeProposal]:
    query = ChangeProposal.objects.select_related("proposed_by", "decided_by")
    if state:
        query = query.filter(state=state)
    return list(query.order_by("-proposed_at", "-id")[:limit])


def changes_pending_count() -> int:
    return ChangeProposal.objects.filter(state=ChangeProposal.State.PENDING).count()


def proposal_message(proposal: ChangeProposal) -> str:
    """What a page says after proposing: where the change stands."""
    if proposal.state == ChangeProposal.State.APPLIED:
        return gettext("Applied: %(summary)s.") % {"summary": proposal.summary}
    if proposal.state == ChangeProposal.State.FAILED:
        return gettext("Not applied: %(reason)s") % {"reason": proposal.reason}
    if proposal.apply_after:
        return gettext(
            "Proposed: %(summary)s. It applies at %(apply_after)s UTC unless another admin "
            "decides (every admin was emailed)."
        ) % {
            "summary": proposal.summary,
            "apply_after": proposal.apply_after.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
        }
    return gettext("Proposed: %(summary)s. Waiting for another admin to approve it.") % {
        "summary": proposal.summary
    }
