"""The payout: its states, channel and mode, what the maker asked, the preview, the release and
what the upstream charged."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from gateway.idempotency import IdempotentModel

# decisions.md 2 "Initiate payout": extra_info.memo ≤ 255, extra_info.internal_notes ≤ 1000.
MEMO_MAX = 255
INTERNAL_NOTES_MAX = 1000
REFERENCE_MAX = 100


class PayoutStatus(models.TextChoices):
    """Our states (draft … approved, submitting, rejected) and the upstream's, normalised."""

    DRAFT = "draft", gettext_lazy("Draft")
    PENDING_APPROVAL = "pending_approval", gettext_lazy("Pending approval")
    APPROVED = "approved", gettext_lazy("Approved")
    SUBMITTING = "submitting", gettext_lazy("Submitting")
    CREATED = "created", gettext_lazy("Created")
    PENDING = "pending", gettext_lazy("Pending")
    PROCESSING = "processing", gettext_lazy("Processing")
    IN_REVIEW = "in_review", gettext_lazy("In review")
    KYT_PENDING = "kyt_pending", gettext_lazy("KYT pending")
    COMPLETED = "completed", gettext_lazy("Completed")
    FAILED = "failed", gettext_lazy("Failed")
    RETURNED = "returned", gettext_lazy("Returned")
    CANCELLED = "cancelled", gettext_lazy("Cancelled")
    REJECTED = "rejected", gettext_lazy("Rejected")


# Before the upstream accepted the payout: the reserved price is still to be used.
RESERVATION_MATTERS = frozenset(
    {
        PayoutStatus.DRAFT,
        PayoutStatus.PENDING_APPROVAL,
        PayoutStatus.APPROVED,
        PayoutStatus.SUBMITTING,
    }
)


class PayoutChannel(models.TextChoices):
    PAGE = "page", gettext_lazy("Page")
    API = "api", gettext_lazy("API")


class PayoutMode(models.TextChoices):
    """Follows the virtual account: fiat debits its balance, crypto is funded by a deposit."""

    FIAT = "fiat", gettext_lazy("Fiat")
    CRYPTO = "crypto", gettext_lazy("Crypto")


class ReservationStatus(models.TextChoices):
    NONE = "", gettext_lazy("Not reserved")
    ACTIVE = "ACTIVE", gettext_lazy("Reserved")
    EXPIRED = "EXPIRED", gettext_lazy("Expired")
    USED = "USED", gettext_lazy("Used")


class UpstreamWait(models.TextChoices):
    """Why an initiation waits to be sent again (its label completes "Waiting for …")."""

    NONE = "", gettext_lazy("nothing")
    RATE_LIMIT = "rate_limit", gettext_lazy("the upstream's rate limit")
    NO_ANSWER = "no_answer", gettext_lazy("an answer from the upstream")
    SERVER_ERROR = "server_error", gettext_lazy("the upstream to recover from an error")
    BUDGET = "budget", gettext_lazy("room in PayOps's budget of upstream calls")


class Payout(IdempotentModel):
    """
    A payout from a virtual account to a recipient, from its draft to its final upstream state.
    `idempotency_key` (gateway.idempotency) is created with the row, so it is committed before any
    upstream call.
    The `preview_*` fields keep the last payout preview (fees, what the recipient gets) and the
    quote it reserved, if any.
    """

    environment = models.ForeignKey(
        "gateway.Environment", on_delete=models.PROTECT, related_name="payouts"
    )
    maker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payouts_made"
    )
    virtual_account = models.ForeignKey(
        "accounts.VirtualAccount", on_delete=models.PROTECT, related_name="payouts"
    )
    recipient = models.ForeignKey(
        "accounts.Recipient", on_delete=models.PROTECT, related_name="payouts"
    )
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=8, default="USD")
    quote = models.ForeignKey(
        "quotes.Quote", on_delete=models.PROTECT, null=True, blank=True, related_name="payouts"
    )
    reference = models.CharField(max_length=REFERENCE_MAX, blank=True)
    memo = models.CharField(max_length=MEMO_MAX, blank=True)
    internal_notes = models.TextField(max_length=INTERNAL_NOTES_MAX, blank=True)
    # Overrides of the client's default markup for this payout (only without a quote).
    client_markup_fixed_fee = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True
    )
    client_markup_percentage_fee = models.DecimalField(
        max_digits=12, decimal_places=8, null=True, blank=True
    )
    client_markup_fx_markup = models.DecimalField(
        max_digits=12, decimal_places=8, null=True, blank=True
    )
    mode = models.CharField(max_length=8, choices=PayoutMode.choices, default=PayoutMode.FIAT)
    # payment_instructions of a crypto payout: the stablecoin and the network that fund it.
    payment_currency = models.CharField(max_length=8, blank=True)
    payment_network = models.CharField(max_length=16, blank=True)
    # The last preview.
    preview_fees = models.JSONField(default=dict, blank=True)
    preview_total_fees = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    preview_recipient_amount = models.DecimalField(
        max_digits=18, decimal_places=2, null=True, blank=True
    )
    preview_recipient_currency = models.CharField(max_length=8, blank=True)
    previewed_at = models.DateTimeField(null=True, blank=True)
    preview_quote_id = models.CharField(max_length=64, blank=True)
    preview_quote_expires_at = models.DateTimeField(null=True, blank=True)
    preview_quote_status = models.CharField(
        max_length=10, choices=ReservationStatus.choices, blank=True, default=ReservationStatus.NONE
    )
    # NULL (not "") until the upstream answers, so the per-environment unique constraint holds.
    upstream_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    status = models.CharField(
        max_length=20, choices=PayoutStatus.choices, default=PayoutStatus.DRAFT, db_index=True
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    # Maker-checker: the policy version and count are stamped at submission, so a
    # later policy change never applies to this payout; approvals belong to a round, which
    # restarts when what was approved changes beyond the re-quote tolerance.
    approval_policy = models.ForeignKey(
        "ApprovalPolicy", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    approvals_required = models.PositiveSmallIntegerField(default=1)
    # The ordered chain stamped with the policy [{"role", "count"}]; its total is the count.
    approval_chain = models.JSONField(default=list, blank=True)
    # Where the payout was created, then submitted: the page or the API (approval conditions).
    channel = models.CharField(max_length=4, choices=PayoutChannel.choices, blank=True)
    approval_round = models.PositiveIntegerField(default=1)
    approved_amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    approved_recipient_amount = models.DecimalField(
        max_digits=18, decimal_places=2, null=True, blank=True
    )
    rejection_reason = models.CharField(max_length=500, blank=True)
    # The fiat OTP: PayOps counts wrong tries itself (the upstream only says "wrong"). The code
    # is kept encrypted only while a resend of the initiation may need it.
    otp_sent_to = models.EmailField(blank=True)
    otp_expires_at = models.DateTimeField(null=True, blank=True)
    otp_failed_attempts = models.PositiveSmallIntegerField(default=0)
    otp_code_encrypted = models.TextField(blank=True)
    # Initiation: how often the call was sent (always with `idempotency_key`) and the last error.
    submit_attempts = models.PositiveIntegerField(default=0)
    submitting_since = models.DateTimeField(null=True, blank=True)
    last_submit_at = models.DateTimeField(null=True, blank=True)
    initiation_error = models.CharField(max_length=500, blank=True)
    # While the initiation waits to be sent again (the gateway's backoff within one send, or the
    # recovery schedule after it): why, the attempt that comes next (0: the schedule's next
    # send), when it comes, and since when. Cleared when the upstream answers.
    upstream_wait = models.CharField(max_length=16, choices=UpstreamWait.choices, blank=True)
    upstream_wait_attempt = models.PositiveSmallIntegerField(default=0)
    upstream_wait_until = models.DateTimeField(null=True, blank=True)
    upstream_wait_since = models.DateTimeField(null=True, blank=True)
    # Tracking: the upstream's own answer, a crypto payout's deposit instructions, why it failed.
    upstream_status = models.CharField(max_length=20, blank=True)
    upstream_payload = models.JSONField(default=dict, blank=True)
    deposit_instructions = models.JSONField(default=dict, blank=True)
    failure_reason = models.CharField(max_length=200, blank=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    # What the upstream charged, from its initiation answer, beside the `preview_*` figures the
    # approvers saw. `charged_total` is amount + fees: the debit (fiat) or the deposit to send
    # (crypto, in the stablecoin). Any difference from what was shown is listed and flagged.
    charged_amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    charged_currency = models.CharField(max_length=8, blank=True)
    charged_fees = models.JSONField(default=dict, blank=True)
    charged_total_fees = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    charged_recipient_amount = models.DecimalField(
        max_digits=18, decimal_places=2, null=True, blank=True
    )
    charged_recipient_currency = models.CharField(max_length=8, blank=True)
    charged_total = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    charged_total_currency = models.CharField(max_length=8, blank=True)
    charged_at = models.DateTimeField(null=True, blank=True)
    # When the upstream made the payout (and debited a fiat one), by its own clock: the first
    # report that says (GET or list `created_at`, a `payout.*` event's). The ledger dates the
    # debit here, else at `charged_at` (docs/books.md).
    upstream_created_at = models.DateTimeField(null=True, blank=True)
    charge_differs = models.BooleanField(default=False)
    charge_differences = models.JSONField(default=list, blank=True)
    # Polling's straggler bookkeeping (tracking.polling): reads in a row that did not find the
    # payout where it should be, and when the last one missed; a straggler waits longer each time.
    poll_misses = models.PositiveSmallIntegerField(default=0)
    poll_missed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-pk")
        permissions = [("view_evidence", "Can download a payout's evidence pack")]
        # The lists' orders (docs/finance.md "At 100,000 rows"): the payout list and the API,
        # newest first in one environment; the approval inbox, by submission within a status.
        indexes = [
            models.Index(fields=["environment", "created_at", "id"], name="payout_env_created"),
            models.Index(
                fields=["environment", "status", "submitted_at", "id"],
                name="payout_env_status_submitted",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["environment", "upstream_id"],
                condition=models.Q(upstream_id__isnull=False),
                name="payout_upstream_id_per_environment",
            ),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="payout_amount_positive"),
            models.CheckConstraint(
                condition=models.Q(mode="crypto") | models.Q(payment_currency=""),
                name="payout_fiat_without_payment_instructions",
            ),
        ]

    def __str__(self) -> str:
        return f"payout {self.pk} {self.amount} {self.currency} ({self.status})"

    @property
    def upstream_status_label(self) -> str:
        """The upstream's last word (`COMPLETED`, kept as it came) as the status's label."""
        value = self.upstream_status.lower()
        if value not in PayoutStatus.values:
            return self.upstream_status
        return str(PayoutStatus(value).label)

    @property
    def is_draft(self) -> bool:
        return self.status == PayoutStatus.DRAFT

    @property
    def reservation_matters(self) -> bool:
        """Whether the reserved quote's time left still matters: until the upstream accepted
        the payout (it is sent with the quote), never once it was accepted, refused or ended."""
        return self.status in RESERVATION_MATTERS

    @property
    def payment_instructions(self) -> dict[str, str] | None:
        """The upstream's `payment_instructions` of a crypto payout; None in fiat mode."""
        if self.mode != PayoutMode.CRYPTO:
            return None
        return {"network": self.payment_network, "currency": self.payment_currency}

    @property
    def client_markup(self) -> dict[str, str] | None:
        values = {
            "fixed_fee": self.client_markup_fixed_fee,
            "percentage_fee": self.client_markup_percentage_fee,
            "fx_markup": self.client_markup_fx_markup,
        }
        if all(value is None for value in values.values()):
            return None
        return {key: str(value) for key, value in values.items() if value is not None}

    @property
    def submitted_upstream(self) -> bool:
        """Sent (or being sent) to the upstream: past the point where our side can withdraw it."""
        return self.status == PayoutStatus.SUBMITTING or bool(self.upstream_id)

    @property
    def total_currency(self) -> str:
        """What amount + fees is counted in: the stablecoin deposited (crypto), else ours."""
        return self.payment_currency if self.mode == PayoutMode.CRYPTO else self.currency

    @property
    def preview_total(self) -> Decimal | None:
        """Amount + previewed fees: the debit (fiat) or the deposit to send (crypto)."""
        if self.preview_total_fees is None:
            return None
        return self.amount + self.preview_total_fees

    @property
    def corridor(self) -> str:
        return f"{self.currency}→{self.preview_recipient_currency or '?'}"
