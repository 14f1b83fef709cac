"""Reconciliation runs, the exceptions they find, and the comments on them.

Declared here and imported by books/models.py (Django discovers an app's models there).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.models import VirtualAccount
from gateway.models import Environment
from payouts.models import Payout


class RunState(models.TextChoices):
    RUNNING = "running", gettext_lazy("Running")
    PAUSED = "paused", gettext_lazy("Paused")
    COMPLETED = "completed", gettext_lazy("Completed")
    FAILED = "failed", gettext_lazy("Failed")


class RunPhase(models.TextChoices):
    """A run's steps, in order: list the upstream's payouts page by page, look up ours the list
    did not show, then compare each account's balance."""

    PAYOUTS = "payouts", gettext_lazy("Upstream payouts")
    UNSEEN = "unseen", gettext_lazy("Our payouts the list did not show")
    BALANCES = "balances", gettext_lazy("Balances")
    DONE = "done", gettext_lazy("Done")


class ReconciliationRun(models.Model):
    """One comparison of PayOps's records with the upstream's, for an environment (and optionally
    one virtual account) and a window of payout creation dates; resumable from its cursor."""

    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="+")
    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    state = models.CharField(max_length=10, choices=RunState.choices, default=RunState.RUNNING)
    phase = models.CharField(max_length=10, choices=RunPhase.choices, default=RunPhase.PAYOUTS)
    # The cursor: the next page of GET /v1/payouts, the upstream ids the list showed, our
    # payouts still to look up, and the accounts whose balance is compared.
    next_page = models.PositiveIntegerField(default=1)
    total_pages = models.PositiveIntegerField(null=True, blank=True)
    seen_upstream_ids = models.JSONField(default=list, blank=True)
    unseen_ids = models.JSONField(default=list, blank=True)
    accounts_done = models.JSONField(default=list, blank=True)
    calls_spent = models.PositiveIntegerField(default=0)
    payouts_checked = models.PositiveIntegerField(default=0)
    accounts_checked = models.PositiveIntegerField(default=0)
    findings = models.PositiveIntegerField(default=0)
    resolved = models.PositiveIntegerField(default=0)
    interruptions = models.PositiveIntegerField(default=0)
    paused_reason = models.CharField(max_length=300, blank=True)
    resume_after = models.DateTimeField(null=True, blank=True)
    trigger = models.CharField(max_length=10, default="manual")  # manual | schedule
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-started_at", "-pk")
        indexes = [models.Index(fields=["state", "resume_after"])]

    def __str__(self) -> str:
        return f"Run {self.pk}"

    @property
    def is_open(self) -> bool:
        return self.state in (RunState.RUNNING, RunState.PAUSED)


class ExceptionKind(models.TextChoices):
    MISSING_UPSTREAM = "missing_upstream", gettext_lazy("Missing upstream")
    MISSING_IN_PAYOPS = "missing_in_payops", gettext_lazy("Missing in PayOps")
    STATUS_DIFFERS = "status_differs", gettext_lazy("Status differs")
    AMOUNT_DIFFERS = "amount_differs", gettext_lazy("Amount differs")
    FEE_DIFFERS = "fee_differs", gettext_lazy("Fee differs")
    RATE_DIFFERS = "rate_differs", gettext_lazy("Rate differs")
    BALANCE_DIFFERS = "balance_differs", gettext_lazy("Balance differs")


PAYOUT_KINDS = tuple(k for k in ExceptionKind.values if k != ExceptionKind.BALANCE_DIFFERS)


class ExceptionState(models.TextChoices):
    OPEN = "open", gettext_lazy("Open")
    INVESTIGATING = "investigating", gettext_lazy("Investigating")
    RESOLVED = "resolved", gettext_lazy("Resolved")


class ReconciliationException(models.Model):
    """One mismatch a run found: what it concerns, both sides, the difference, who owns it."""

    environment = models.ForeignKey(Environment, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=20, choices=ExceptionKind.choices)
    # What it is about: the upstream payout id, or "va:<pk>" for a balance.
    key = models.CharField(max_length=80)
    payout = models.ForeignKey(
        Payout, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    upstream_id = models.CharField(max_length=64, blank=True)
    ours = models.JSONField(default=dict, blank=True)
    theirs = models.JSONField(default=dict, blank=True)
    difference = models.DecimalField(max_digits=18, decimal_places=6, null=True, blank=True)
    summary = models.CharField(max_length=300)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    state = models.CharField(
        max_length=14, choices=ExceptionState.choices, default=ExceptionState.OPEN
    )
    resolution_reason = models.CharField(max_length=500, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    auto_resolved = models.BooleanField(default=False)
    first_seen_run = models.ForeignKey(
        ReconciliationRun, on_delete=models.PROTECT, related_name="+"
    )
    last_seen_run = models.ForeignKey(ReconciliationRun, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("-created_at", "-pk")
        constraints = [
            models.UniqueConstraint(
                fields=["environment", "kind", "key"],
                condition=~Q(state="resolved"),
                name="books_one_unresolved_exception",
            )
        ]
        indexes = [models.Index(fields=["state", "kind"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.key}"


class ExceptionComment(models.Model):
    exception = models.ForeignKey(
        ReconciliationException, on_delete=models.CASCADE, related_name="comments"
    )
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    body = models.TextField(max_length=2000)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("at", "pk")

    def __str__(self) -> str:
        return f"Comment {self.pk} on {self.exception_id}"
