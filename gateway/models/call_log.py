"""The upstream call log: one row per HTTP attempt, with redacted, truncated bodies."""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

# The codes our own transport gives an attempt that got no usable answer (gateway.attempt,
# transport, limiter), as people read them; the upstream's own error codes stay as it sent them.
OUR_ERROR_LABELS = {
    "timeout": gettext_lazy("no answer in time"),
    "connection_error": gettext_lazy("the connection failed"),
    "budget_exhausted": gettext_lazy("the weekly budget is spent"),
    "invalid_body": gettext_lazy("an answer that could not be read"),
    "limiter_timeout": gettext_lazy("waited too long for the rate limit"),
}


class UpstreamCall(models.Model):
    """One attempt of one upstream request (a retried call has one row per attempt)."""

    environment = models.ForeignKey(
        "gateway.Environment", on_delete=models.SET_NULL, null=True, related_name="calls"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    operation = models.CharField(max_length=60, blank=True)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    attempt = models.PositiveSmallIntegerField(default=1)
    idempotency_key = models.CharField(max_length=100, blank=True)
    error_code = models.CharField(max_length=100, blank=True)
    priority = models.CharField(max_length=20, blank=True)
    request_body = models.TextField(blank=True)
    response_body = models.TextField(blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [models.Index(fields=["environment", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.method} {self.path} → {self.status or '-'}"

    @property
    def error_label(self) -> str:
        """Our own error codes in words ("" for the upstream's codes, shown as sent)."""
        return str(OUR_ERROR_LABELS.get(self.error_code, ""))

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300
