"""The payout's choices and limits: statuses, modes, reservations, waits, document kinds."""

from __future__ import annotations

from django.db import models

MEMO_MAX = 255
INTERNAL_NOTES_MAX = 1000
REFERENCE_MAX = 100


class PayoutStatus(models.TextChoices):
    """Our states (draft … approved, submitting, rejected) and the upstream's, normalised."""

    DRAFT = "draft", "Draft"
    PENDING_APPROVAL = "pending_approval", "Pending approval"
    APPROVED = "approved", "Approved"
    SUBMITTING = "submitting", "Submitting"
    CREATED = "created", "Created"
    PENDING = "pending", "Pending"
    PROCESSING = "processing", "Processing"
    IN_REVIEW = "in_review", "In review"
    KYT_PENDING = "kyt_pending", "KYT pending"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    RETURNED = "returned", "Returned"
    CANCELLED = "cancelled", "Cancelled"
    REJECTED = "rejected", "Rejected"


class PayoutMode(models.TextChoices):
    """Follows the virtual account: fiat debits its balance, crypto is funded by a deposit."""

    FIAT = "fiat", "Fiat"
    CRYPTO = "crypto", "Crypto"


class ReservationStatus(models.TextChoices):
    NONE = "", "Not reserved"
    ACTIVE = "ACTIVE", "Reserved"
    EXPIRED = "EXPIRED", "Expired"
    USED = "USED", "Used"


class UpstreamWait(models.TextChoices):
    """Why an initiation waits to be sent again (its label completes "Waiting for …")."""

    NONE = "", "nothing"
    RATE_LIMIT = "rate_limit", "the upstream's rate limit"
    NO_ANSWER = "no_answer", "an answer from the upstream"
    SERVER_ERROR = "server_error", "the upstream to recover from an error"
    BUDGET = "budget", "room in PayOps's budget of upstream calls"


class DocumentKind(models.TextChoices):
    """The `type` of a supporting document in the payout body (what the document proves)."""

    INVOICE = "invoice", "Invoice"
    CONTRACT = "contract", "Contract"
    RECEIPT = "receipt", "Receipt"
    OTHER = "other", "Other"
