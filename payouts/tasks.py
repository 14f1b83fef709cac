"""Payout background work (django-q2): thin calls into services."""

from __future__ import annotations

from payouts.drafts.preview import reservations_expire_due
from payouts.release.initiation import initiation_send, payouts_recover_submitting
from payouts.tracking.polling.run import payouts_poll


def expire_due_reservations() -> int:
    """Scheduled every minute: reserved preview quotes past their expiry become EXPIRED."""
    return reservations_expire_due()


def payout_initiation_send(payout_id: int) -> str:
    """Send one payout to the upstream (same key on every run) and record its answer."""
    return str(initiation_send(payout_id=payout_id).status)


def recover_submitting() -> int:
    """Schedule: re-send payouts stuck in `submitting` with their own key."""
    return payouts_recover_submitting()


def poll_payouts() -> int:
    """Schedule: read the upstream's payout list for payouts we heard nothing about for a while."""
    return payouts_poll()
