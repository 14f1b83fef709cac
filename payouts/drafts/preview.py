"""A draft's priced preview (fees, what the recipient gets, a reserved quote) and its expiry."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from gateway.errors import BudgetExhausted, TemporaryError, UpstreamError
from gateway.service_errors import unanswered
from payouts.drafts.checks import add_problem, draft_problems
from payouts.drafts.pricing import fees_json, preview_upstream
from payouts.drafts.services import require_own_draft
from payouts.errors import PayoutInvalid
from payouts.models import (
    Payout,
    ReservationStatus,
)
from staff.actions import record_action
from staff.models import StaffUser


def payout_preview(*, by: StaffUser, payout: Payout, reserve: bool = False) -> Payout:
    """The upstream's payout preview (fees, what the recipient gets); `reserve` locks the price
    for 15 minutes as a quote the payout will redeem."""
    require_own_draft(by, payout)
    errors = draft_problems(payout, now=timezone.now())
    if errors:
        raise PayoutInvalid(errors)
    if reserve and payout.quote_id is not None:
        raise PayoutInvalid(
            {"quote": [gettext("The payout already uses a quote: nothing to reserve.")]}
        )
    try:
        preview = preview_upstream(payout, reserve=reserve)
    except UpstreamError as exc:
        raise upstream_refusal(exc) from exc
    fees = preview.fees
    with transaction.atomic():
        locked = Payout.objects.select_for_update().get(pk=payout.pk)
        require_own_draft(by, locked)
        if (
            locked.amount != payout.amount
            or locked.recipient_id != payout.recipient_id
            or locked.payment_instructions != payout.payment_instructions
        ):
            raise PayoutInvalid(
                {"": [gettext("The draft changed during the preview: preview again.")]}
            )
        locked.preview_fees = fees_json(fees)
        locked.preview_total_fees = fees.total_fees if fees else None
        locked.preview_recipient_amount = preview.recipient_amount
        locked.preview_recipient_currency = preview.recipient_currency
        locked.previewed_at = timezone.now()
        if preview.quote_id:
            locked.preview_quote_id = preview.quote_id
            locked.preview_quote_expires_at = preview.quote_expires_at
            locked.preview_quote_status = ReservationStatus.ACTIVE
        elif not reserve:
            locked.preview_quote_id = ""
            locked.preview_quote_expires_at = None
            locked.preview_quote_status = ReservationStatus.NONE
        locked.updated_at = timezone.now()
        locked.save()
        record_action(
            actor=by,
            action="payout.previewed",
            target=locked,
            details={
                "amount": locked.amount,
                "fees": locked.preview_fees,
                "total_fees": locked.preview_total_fees,
                "total": locked.preview_total,
                "total_currency": locked.total_currency,
                "recipient_amount": locked.preview_recipient_amount,
                "recipient_currency": locked.preview_recipient_currency,
                "reserved_quote": locked.preview_quote_id or None,
                "reserved_until": locked.preview_quote_expires_at,
            },
        )
    return locked


# The upstream's field names on payout calls, mapped to ours.
UPSTREAM_FIELDS = {
    "virtual_account_id": "virtual_account",
    "recipient_id": "recipient",
    "amount": "amount",
    "quote_id": "quote",
    "client_markup": "client_markup",
    "payment_instructions": "payment_currency",
}


def upstream_refusal(exc: UpstreamError) -> PayoutInvalid:
    """The upstream's failure as the draft's error: unanswered (503 in the API) or refused."""
    if isinstance(exc, TemporaryError | BudgetExhausted):
        return PayoutInvalid(
            {
                "": [
                    f"{unanswered(exc)}: nothing was saved or charged. Try again in a minute; "
                    "the draft is as you left it."
                ]
            },
            code="upstream_unavailable",
        )
    errors: dict[str, list[str]] = {}
    for name, messages in exc.form_errors().items():
        target = UPSTREAM_FIELDS.get(name.split(".")[0], "")
        for message in messages:
            add_problem(errors, target, message if target else f"{name}: {message}")
    if not errors:
        add_problem(
            errors, "", gettext("The upstream refused: %(message)s") % {"message": exc.message}
        )
    return PayoutInvalid(errors, code=exc.code or "upstream_refused")


def reservations_expire_due(*, now: datetime | None = None) -> int:
    """Housekeeping: reserved preview quotes past their expiry are marked EXPIRED."""
    moment = now or timezone.now()
    with transaction.atomic():
        count = Payout.objects.filter(
            preview_quote_status=ReservationStatus.ACTIVE, preview_quote_expires_at__lte=moment
        ).update(preview_quote_status=ReservationStatus.EXPIRED, updated_at=moment)
        if count:
            record_action(
                actor=None, action="payouts.reservations_expired", details={"count": count}
            )
    return count
