"""The books' own records: explained balance adjustments (the rest lives in its packages)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.models import VirtualAccount


class AdjustmentKind(models.TextChoices):
    """Why the upstream's balance moved without a deposit or a payout PayOps knows of."""

    UPSTREAM = "upstream", gettext_lazy("Adjusted by the upstream")
    CORRECTION = "correction", gettext_lazy("Correction")


class BalanceAdjustment(models.Model):
    """
    A movement of a virtual account's balance that no deposit or payout explains, recorded once a
    person has explained it (a reconciliation exception resolved as an adjustment). It enters the
    ledger (`books.ledger`) so statements balance against the upstream afterwards.

    The books' permissions are declared here, on the app's first model.
    """

    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.PROTECT, related_name="balance_adjustments"
    )
    # Signed: positive adds to the balance.
    amount = models.DecimalField(max_digits=18, decimal_places=2)
    currency = models.CharField(max_length=3)
    at = models.DateTimeField(help_text="When the balance moved (as far as it is known).")
    kind = models.CharField(max_length=12, choices=AdjustmentKind.choices)
    reason = models.CharField(max_length=500)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("at", "pk")
        indexes = [models.Index(fields=["virtual_account", "at"])]
        permissions = [
            ("view_books", "Can read statements, reports, receipts and reconciliation"),
            ("reconcile", "Can run reconciliation and work its exceptions"),
        ]

    def __str__(self) -> str:
        return f"{self.amount} {self.currency} at {self.at:%Y-%m-%d}"


# Reconciliation's models live in their package; imported here so Django discovers them.
from books.reconciliation.models import (  # noqa: E402
    ExceptionComment,
    ReconciliationException,
    ReconciliationRun,
)

__all__ = [
    "AdjustmentKind",
    "BalanceAdjustment",
    "ExceptionComment",
    "ReconciliationException",
    "ReconciliationRun",
]
