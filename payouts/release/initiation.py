"""Exactly-once initiation: move to submitting with the key committed, call after commit, record.

The rules (docs/payouts.md, ADR 0011): the idempotency key is committed with the payout before
the first call; the call runs in a task after commit; every resend (the gateway's retries of
timeouts, 5xx and 429; a re-run task; the recovery schedule) sends the same body with the same
key; the answer is recorded under the row lock and only from `submitting`.
"""

from __future__ import annotations

import functools
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop, ngettext

from accounts.recipients import recipient_not_payable_reason
from console import metrics
from console.sentences import summary
from gateway.client import call_sync, upstream
from gateway.errors import BudgetExhausted, PermanentError, TemporaryError, UpstreamError
from gateway.retry_policy import RetryNotice
from gateway.schemas import PayoutCreated
from payouts.approval import notifications
from payouts.drafts.documents import supporting_documents
from payouts.drafts.pricing import charge_record
from payouts.errors import PayoutActionRefused
from payouts.models import ChangeSource, NotificationKind, Payout, PayoutStatus
from payouts.release.waiting import gave_up_message, recovery_due, wait_cleared, wait_record
from payouts.states import can_move, payout_change_record, payout_locked, payout_transition
from payouts.tracking.upstream_status import upstream_status
from staff import crypto
from staff.actions import record_action
from staff.models import StaffUser

logger = logging.getLogger("payouts")
S = PayoutStatus

# Refusals a person can correct without a new approval: a new code, a re-quote, funds arriving.
# The upstream stored nothing for these (the key is still free), so the payout goes back to
# APPROVED and keeps its key.
CORRECTABLE = {
    "INVALID_OTP": "otp",
    "OTP_EXPIRED": "otp",
    "OTP_BLOCKED": "otp",
    "OTP_REQUIRED": "otp",
    "QUOTE_INVALID_STATE": "quote",
    "QUOTE_NOT_FOUND": "quote",
    # The reserved quote was priced for another body (amount, stablecoin, network): a re-quote
    # reserves one that fits; nothing was paid, so failing for good would lose the approvals.
    "QUOTE_MISMATCH": "quote",
    "INSUFFICIENT_FUNDS": "funds",
}


def _queue_submit(payout_id: int) -> None:
    """Queue the call once the transaction that made the payout `submitting` has committed."""
    from django_q.tasks import async_task

    from payouts.tasks import payout_initiation_send

    transaction.on_commit(
        lambda: async_task(
            payout_initiation_send, payout_id, task_name=f"payout_initiation_send_{payout_id}"
        )
    )


def submission_start(*, payout: Payout, by: StaffUser | None, otp: str = "") -> Payout:
    """
    Move a locked, approved payout to `submitting` and queue the call after commit. The key
    (`payout.idempotency_key`) was committed with the row; the OTP, when fiat, is kept encrypted
    for as long as a resend may need it. Call inside the caller's transaction.
    """
    if payout.status == S.SUBMITTING:
        return payout  # a double click: already on its way, nothing more to do
    if payout.status != S.APPROVED:
        raise PayoutActionRefused(
            "not_approved", gettext("Only an approved payout can be sent to the upstream.")
        )
    reason = recipient_not_payable_reason(payout.recipient)
    if reason:
        raise PayoutActionRefused("recipient_not_approved", reason, field="recipient")
    now = timezone.now()
    payout.otp_code_encrypted = crypto.encrypt(otp) if otp else ""
    payout.submitting_since = now
    payout.initiation_error = ""
    cleared = wait_cleared(payout)
    payout.save(
        update_fields=["otp_code_encrypted", "submitting_since", "initiation_error", *cleared]
    )
    payout_transition(
        payout,
        S.SUBMITTING,
        source=ChangeSource.STAFF,
        by=by,
        at=now,
        audit="payout.submitting",
        details={"idempotency_key": str(payout.idempotency_key)},
    )
    _queue_submit(payout.pk)
    return payout


def initiation_arguments(payout: Payout) -> dict[str, Any]:
    """
    The initiation request, a pure function of the committed payout: every resend is the same
    body, which the upstream needs to replay the first answer for the same key (a different body
    would be refused as IDEMPOTENCY_KEY_REUSED rather than paid twice).
    """
    # base64 data URIs in upload order (the model's ordering): the same list on every resend.
    documents = supporting_documents(payout)
    extra_info = {
        key: value
        for key, value in (("memo", payout.memo), ("internal_notes", payout.internal_notes))
        if value
    }
    quote_id = payout.preview_quote_id or (payout.quote.upstream_id if payout.quote else "")
    return {
        "virtual_account_id": payout.virtual_account.upstream_id,
        "idempotency_key": str(payout.idempotency_key),
        "recipient_id": payout.recipient.upstream_id,
        "amount": payout.amount,
        "quote_id": quote_id or None,
        "payment_instructions": payout.payment_instructions,
        "supporting_documents": documents or None,
        "client_markup": None if quote_id else payout.client_markup,
        "extra_info": extra_info or None,
        "reference": payout.reference or None,
    }


def initiation_send(*, payout_id: int) -> Payout:
    """
    The task body: send the payout (same key, same body) and record the answer. Safe to run
    twice, late, or after a crash: only a payout still `submitting` is sent, and the upstream
    replays its first answer for the key.
    """
    payout = Payout.objects.select_related(
        "environment", "virtual_account", "recipient", "quote"
    ).get(pk=payout_id)
    if payout.status != S.SUBMITTING:
        return payout
    arguments = initiation_arguments(payout)
    otp = crypto.decrypt(payout.otp_code_encrypted) if payout.otp_code_encrypted else None
    payout.last_submit_at = timezone.now()
    Payout.objects.filter(pk=payout.pk).update(
        submit_attempts=F("submit_attempts") + 1, last_submit_at=payout.last_submit_at
    )

    def waiting(notice: RetryNotice) -> None:
        """The gateway waits before its next attempt: the page says so, and until when."""
        wait_record(
            payout=payout,
            failure=notice.failure,
            attempt=notice.next_attempt,
            until=notice.next_try_at,
        )

    try:
        created = call_sync(
            upstream(payout.environment).payouts.initiate, otp=otp, on_retry=waiting, **arguments
        )
    except (TemporaryError, BudgetExhausted) as exc:
        # Nothing known: it may or may not have taken effect. Stay `submitting`; the recovery
        # schedule re-sends with the same key, and the upstream replays if it did.
        due = recovery_due(payout)
        metrics.release_observed(outcome="undecided")
        _note_error(payout.pk, gave_up_message(exc, due))
        wait_record(payout=payout, failure=exc, attempt=0, until=due)
        return Payout.objects.get(pk=payout.pk)
    except PermanentError as exc:
        return initiation_refused(payout_id=payout.pk, error=exc)
    return initiation_recorded(payout_id=payout.pk, created=created)


def _note_error(payout_id: int, message: str) -> None:
    Payout.objects.filter(pk=payout_id).update(initiation_error=message[:500])


def initiation_recorded(*, payout_id: int, created: PayoutCreated) -> Payout:
    """Record the upstream's payout (id, status, deposit instructions) once, under the row lock."""
    report = upstream_status(created.model_dump(mode="json"))
    with transaction.atomic():
        payout = Payout.objects.select_for_update(of=("self",)).get(pk=payout_id)
        if payout.upstream_id:
            if payout.upstream_id != report.upstream_id:
                # Never expected (same key, same answer): surface it loudly, change nothing.
                logger.error(
                    "payout %s: upstream answered id %s but %s is recorded",
                    payout.pk,
                    report.upstream_id,
                    payout.upstream_id,
                )
            return payout
        payout.upstream_id = report.upstream_id
        # Once per payout: the first answer.
        transaction.on_commit(functools.partial(metrics.release_observed, outcome="accepted"))
        payout.upstream_status = str(created.status)
        payout.upstream_payload = created.model_dump(mode="json")
        if created.deposit_instructions is not None:
            payout.deposit_instructions = created.deposit_instructions.model_dump(mode="json")
        payout.otp_code_encrypted = ""  # no resend will need it any more
        payout.initiation_error = ""
        charge_record(payout=payout, created=created, at=timezone.now())
        wait_cleared(payout)
        payout.save()
        details = {
            "upstream_id": report.upstream_id,
            "idempotency_key": str(payout.idempotency_key),
            "attempts": payout.submit_attempts,
        }
        if payout.status == S.SUBMITTING and can_move(payout.status, report.status):
            payout_transition(
                payout,
                report.status,
                source=ChangeSource.SYSTEM,
                reason="initiated upstream",
                at=timezone.now(),
                audit="payout.initiated",
                details=details,
            )
        else:
            payout_change_record(payout, by=None, audit="payout.initiated", details=details)
        # Events that came before this answer named an upstream id we did not know yet.
        from payouts.tracking.events import replay_unmatched_events

        replay_unmatched_events(payout)
    return payout


def initiation_refused(*, payout_id: int, error: UpstreamError) -> Payout:
    """A permanent refusal: back to `approved` when a person can correct it, else `failed`."""
    kind = CORRECTABLE.get(error.code, "")
    with transaction.atomic():
        payout = Payout.objects.select_for_update(of=("self",)).get(pk=payout_id)
        if payout.status != S.SUBMITTING:
            return payout
        message = error.message
        if kind == "otp":
            payout.otp_code_encrypted = ""
            if error.code == "INVALID_OTP":
                payout.otp_failed_attempts += 1
                left = max(0, settings.PAYOUTS_OTP_MAX_TRIES - payout.otp_failed_attempts)
                message = (
                    ngettext(
                        "Wrong code: %(left)d try remains.",
                        "Wrong code: %(left)d tries remain.",
                        left,
                    )
                    % {"left": left}
                    if left
                    else gettext("Wrong code five times: the code is blocked, send a new one.")
                )
            elif error.code == "OTP_EXPIRED":
                message = gettext("The code expired: send a new one.")
            elif error.code == "OTP_BLOCKED":
                payout.otp_failed_attempts = settings.PAYOUTS_OTP_MAX_TRIES
                message = gettext("Too many wrong codes: the code is blocked, send a new one.")
        payout.initiation_error = message[:500]
        outcome = "correctable" if kind else "refused"
        transaction.on_commit(functools.partial(metrics.release_observed, outcome=outcome))
        cleared = wait_cleared(payout)
        payout.save(
            update_fields=[
                "otp_code_encrypted",
                "otp_failed_attempts",
                "initiation_error",
                *cleared,
            ]
        )
        if not kind:
            payout.failure_reason = f"{error.code or error.status}: {error.message}"[:200]
            payout.save(update_fields=["failure_reason"])
        payout_transition(
            payout,
            S.APPROVED if kind else S.FAILED,
            source=ChangeSource.SYSTEM,
            reason=message,
            at=timezone.now(),
            audit="payout.initiation_refused",
            details={"code": error.code, "status": error.status, "correctable": bool(kind)},
        )
        if not kind:
            notifications.notify_maker(
                payout,
                NotificationKind.FAILED,
                summary(
                    gettext_noop("Payout %(id)s was refused: %(reason)s"),
                    id=payout.pk,
                    reason=message,
                ),
            )
    return payout


def payouts_recover_submitting() -> int:
    """
    The schedule's job: re-send every payout stuck in `submitting` (a crashed worker, an outage)
    with the same key. Past PAYOUTS_SUBMIT_MAX_ATTEMPTS it stops and leaves it to a person.
    """
    stale = timezone.now() - timedelta(seconds=settings.PAYOUTS_SUBMITTING_STALE_SECONDS)
    ids = list(
        Payout.objects.filter(
            status=S.SUBMITTING,
            submit_attempts__lt=settings.PAYOUTS_SUBMIT_MAX_ATTEMPTS,
        )
        .filter(_stale_since(stale))
        .values_list("pk", flat=True)
    )
    for payout_id in ids:
        initiation_send(payout_id=payout_id)
    return len(ids)


def _stale_since(moment: Any) -> Any:
    from django.db.models import Q

    return Q(last_submit_at__lt=moment) | Q(
        last_submit_at__isnull=True, submitting_since__lt=moment
    )


def payout_retry(*, payout: Payout | int, by: StaffUser) -> Payout:
    """A person asks to re-send a payout stuck in `submitting` now (same key, same body)."""
    from staff.roles import PAYOUT_APPROVE

    if not by.has_perm(PAYOUT_APPROVE):
        from django.core.exceptions import PermissionDenied

        raise PermissionDenied(gettext("Only an approver may re-send a payout."))
    with transaction.atomic():
        locked = payout_locked(payout)
        if locked.status != S.SUBMITTING:
            raise PayoutActionRefused(
                "not_submitting",
                gettext("Only a payout waiting for the upstream's answer is re-sent."),
            )
        record_action(actor=by, action="payout.resend", target=locked, details={})
        _queue_submit(locked.pk)
    return locked
