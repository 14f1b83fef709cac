"""Models of quotes: each quotation PayOps requested, and the upstream's lists of valid choices."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy, pgettext_lazy

# Rates keep 6 decimals (decisions.md "Quote arithmetic"); fractions (fees, markups) up to 8.


class QuoteStatus(models.TextChoices):
    ACTIVE = "ACTIVE", pgettext_lazy("quote state", "Active")
    EXPIRED = "EXPIRED", gettext_lazy("Expired")
    USED = "USED", pgettext_lazy("quote state", "Used")


class Quote(models.Model):
    """
    One quotation of one environment, as the upstream priced it: every figure stored as it came
    (Decimal), the raw answer kept beside them, and who asked. `expires_at` is the upstream's
    `expiration_ts`, never a local assumption; an amount update moves it.
    """

    environment = models.ForeignKey(
        "gateway.Environment", on_delete=models.PROTECT, related_name="quotes"
    )
    upstream_id = models.CharField("quote id", max_length=64)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="quotes"
    )
    base_currency = models.CharField(max_length=8)
    quote_currency = models.CharField(max_length=8)
    account_type = models.CharField("payment rail", max_length=16, blank=True)
    network = models.CharField(max_length=16, blank=True)
    amount_in_destination = models.BooleanField(default=False)
    requested_amount = models.DecimalField(max_digits=18, decimal_places=2)
    base_amount = models.DecimalField(max_digits=18, decimal_places=2)
    quote_amount = models.DecimalField(max_digits=18, decimal_places=2)
    rate = models.DecimalField(max_digits=20, decimal_places=6)
    service_rate = models.DecimalField(max_digits=20, decimal_places=6)
    # The fee breakdown; some answers carry only part of it, so each part may be absent.
    base_fixed_fee = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    base_percentage_fee = models.DecimalField(
        max_digits=12, decimal_places=8, null=True, blank=True
    )
    base_fx_markup = models.DecimalField(max_digits=12, decimal_places=8, null=True, blank=True)
    client_fixed_fee = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    client_percentage_fee = models.DecimalField(
        max_digits=12, decimal_places=8, null=True, blank=True
    )
    client_fx_markup = models.DecimalField(max_digits=12, decimal_places=8, null=True, blank=True)
    network_fee = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    penalty_markup = models.DecimalField(max_digits=12, decimal_places=8, null=True, blank=True)
    total_fees = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    status = models.CharField(max_length=10, choices=QuoteStatus.choices, db_index=True)
    expires_at = models.DateTimeField(db_index=True)
    repriced_count = models.PositiveIntegerField(default=0)
    raw = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("-created_at", "-pk")
        constraints = [
            models.UniqueConstraint(
                fields=["environment", "upstream_id"], name="quote_upstream_id_per_environment"
            )
        ]
        # The list's order, newest first in one environment (docs/finance.md).
        indexes = [
            models.Index(fields=["environment", "created_at", "id"], name="quote_env_created")
        ]

    def __str__(self) -> str:
        return f"{self.base_currency}→{self.quote_currency} {self.upstream_id}"

    @property
    def corridor(self) -> str:
        return f"{self.base_currency}→{self.quote_currency}"

    @property
    def requested_currency(self) -> str:
        """The currency of `requested_amount`: the destination's when it is the amount to arrive."""
        return self.quote_currency if self.amount_in_destination else self.base_currency

    def is_usable(self, now: datetime | None = None) -> bool:
        """ACTIVE and not past its expiry: the only quotes a payout or an amount change may use."""
        return self.status == QuoteStatus.ACTIVE and (now or timezone.now()) < self.expires_at


class ValidChoices(models.Model):
    """
    One of the upstream's valid_* lists for one environment (e.g. `valid_account_types` for
    `MXN`). Seeded from interface.md; replaced whenever an upstream error answer carries the list.
    `scope` names what the list depends on: a quote currency, a base currency, or "" for global.
    """

    environment = models.ForeignKey(
        "gateway.Environment", on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(max_length=40)
    scope = models.CharField(max_length=16, blank=True)
    values = models.JSONField(default=list)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["environment", "name", "scope"], name="valid_choices_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}[{self.scope}]"
