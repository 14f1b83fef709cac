"""Payout background work (django-q2): thin calls into services."""

from __future__ import annotations

from payouts.services import reservations_expire_due


def expire_due_reservations() -> int:
    """Scheduled every minute: reserved preview quotes past their expiry become EXPIRED."""
    return reservations_expire_due()
