"""A payout's supporting documents, stored under a random name, and who opened each."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import PurePath

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from payouts.models.payout import Payout


class DocumentKind(models.TextChoices):
    """The `type` of a supporting document in the payout body (what the document proves)."""

    INVOICE = "invoice", gettext_lazy("Invoice")
    CONTRACT = "contract", gettext_lazy("Contract")
    RECEIPT = "receipt", gettext_lazy("Receipt")
    OTHER = "other", gettext_lazy("Other")


def document_path(instance: PayoutDocument, filename: str) -> str:
    # The stored name never reuses the uploaded one: a random name, the detected extension.
    suffix = PurePath(filename).suffix.lower()
    return f"payouts/{instance.payout_id}/{uuid.uuid4().hex}{suffix}"


class PayoutDocument(models.Model):
    """A supporting document: stored through the storage API, its content type sniffed from the
    bytes (never the name), hashed, and attributed to who uploaded it."""

    payout = models.ForeignKey(Payout, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(max_length=16, choices=DocumentKind.choices, default="invoice")
    file = models.FileField(upload_to=document_path, max_length=255)
    file_name = models.CharField(max_length=255)
    content_type = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    uploaded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("uploaded_at", "pk")

    def __str__(self) -> str:  # never the content
        return f"{self.file_name} ({self.content_type}, {self.size} bytes)"

    @staticmethod
    def digest(content: bytes) -> str:
        return hashlib.sha256(content).hexdigest()


class PayoutDocumentView(models.Model):
    """Who opened a supporting document (first and last time): approvers see, before they
    approve and in the approvals, whether each of them opened the documents."""

    document = models.ForeignKey(PayoutDocument, on_delete=models.CASCADE, related_name="views")
    viewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    first_viewed_at = models.DateTimeField(default=timezone.now)
    last_viewed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("first_viewed_at", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=["document", "viewer"], name="payout_document_view_once_per_viewer"
            )
        ]

    def __str__(self) -> str:
        return f"document {self.document_id} opened by {self.viewer_id}"
