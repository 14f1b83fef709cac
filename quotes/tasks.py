"""Quote background work (django-q2): thin calls into services."""

from __future__ import annotations

from quotes.services import quotes_expire_due


def expire_due_quotes() -> int:
    """Scheduled every minute: quotes past their upstream expiry become EXPIRED."""
    return quotes_expire_due()
