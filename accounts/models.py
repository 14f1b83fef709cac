"""Virtual accounts (balances, deposits) and payout recipients mirrored from the upstream."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from users.models import (
    EndUser,
    TimelineEntryBase,
    UpstreamMirror,
    event_once,
    mirror_constraints,
    staff_link,
)


class VirtualAccountMode(models.TextChoices):
    FIAT = "fiat", gettext_lazy("Fiat (debits the balance)")
    CRYPTO = "crypto", gettext_lazy("Crypto (stablecoin deposit per payout)")


class VirtualAccountStatus(models.TextChoices):
    # In context: a state's word agrees with its noun (una cuenta activa, um ambiente ativo).
    ACTIVATING = "activating", gettext_lazy("Activating")
    ACTIVE = "active", pgettext_lazy("account state", "Active")
    FAILED = "failed", pgettext_lazy("account state", "Failed")
    FROZEN = "frozen", gettext_lazy("Frozen")
    DEACTIVATED = "deactivated", gettext_lazy("Deactivated")


class VirtualAccount(UpstreamMirror):
    """
    A USD virtual account of one end user (decisions.md 2 "Virtual accounts"); funds are usable
    only while `active`. The balance is the upstream's `available_balance` as of `balance_as_of`.
    """

    live_kind = "virtual_account"
    request_key = models.UUIDField(default=uuid.uuid4, editable=False)
    end_user = models.ForeignKey(EndUser, on_delete=models.PROTECT, related_name="virtual_accounts")
    mode = models.CharField(
        max_length=10, choices=VirtualAccountMode.choices, default=VirtualAccountMode.FIAT
    )
    type = models.CharField(max_length=20, default="US_BANK")
    bank = models.CharField(max_length=60, default="slovak_savings_bank")
    status = models.CharField(
        max_length=20, choices=VirtualAccountStatus.choices, default=VirtualAccountStatus.ACTIVATING
    )
    account_number = models.CharField(max_length=34, blank=True)
    routing_number = models.CharField(max_length=9, blank=True)
    currency = models.CharField(max_length=3, default="USD")
    available_balance = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    balance_as_of = models.DateTimeField(null=True, blank=True)
    activated_at = models.DateTimeField(null=True, blank=True)
    upstream_updated_at = models.DateTimeField(null=True, blank=True)
    created_by = staff_link()

    class Meta:
        ordering = ("-created_at", "-id")
        constraints = mirror_constraints("virtual_account")
        indexes = [models.Index(fields=["environment", "status"])]
        permissions = [
            ("manage_accounts", "Can open virtual accounts and register recipients"),
        ]

    def __str__(self) -> str:
        # In the reader's language: it names the account in pickers and filters.
        ending = self.account_number[-4:] if self.account_number else gettext("pending")
        if self.mode == VirtualAccountMode.CRYPTO:
            return gettext("Crypto account …%(ending)s") % {"ending": ending}
        return gettext("Fiat account …%(ending)s") % {"ending": ending}

    @property
    def is_active(self) -> bool:
        return self.status == VirtualAccountStatus.ACTIVE


class Deposit(models.Model):
    """Funds received on a virtual account, recorded once per upstream deposit_id."""

    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.PROTECT, related_name="deposits"
    )
    deposit_id = models.CharField(max_length=80)
    event_id = models.CharField(max_length=80, blank=True)
    amount = models.DecimalField(max_digits=18, decimal_places=2)
    currency = models.CharField(max_length=3)
    payment_rail = models.CharField(max_length=30, blank=True)
    sender_name = models.CharField(max_length=200, blank=True)
    trace_number = models.CharField(max_length=60, blank=True)
    received_at = models.DateTimeField()
    recorded_at = models.DateTimeField(auto_now_add=True)
    upstream_payload = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ("-received_at", "-id")
        constraints = [
            models.UniqueConstraint(
                fields=["virtual_account", "deposit_id"], name="deposit_once_per_account"
            )
        ]

    def __str__(self) -> str:
        return f"{self.amount} {self.currency} on {self.received_at:%Y-%m-%d}"


class BalanceSource(models.TextChoices):
    REFRESH = "refresh", gettext_lazy("Refresh (staff or after a deposit)")
    RECONCILIATION = "reconciliation", gettext_lazy("Reconciliation run")


class BalanceSnapshot(models.Model):
    """
    One reading of the upstream's `available_balance` (decisions.md 2 "Virtual accounts": the
    upstream keeps no balance history), kept so a balance as of any date can be proved: the
    books' ledger (`books.ledger`) rolls forward from the nearest reading.
    """

    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.PROTECT, related_name="balance_snapshots"
    )
    balance = models.DecimalField(max_digits=18, decimal_places=2)
    currency = models.CharField(max_length=3)
    # The upstream's `updated_at` (when the balance was last changed there), else when we read it.
    as_of = models.DateTimeField()
    read_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=20, choices=BalanceSource.choices)

    class Meta:
        ordering = ("-read_at", "-id")
        indexes = [models.Index(fields=["virtual_account", "read_at"])]

    def __str__(self) -> str:
        return f"{self.balance} {self.currency} read {self.read_at:%Y-%m-%d %H:%M}"


class VirtualAccountTimelineEntry(TimelineEntryBase):
    virtual_account = models.ForeignKey(
        VirtualAccount, on_delete=models.CASCADE, related_name="timeline"
    )

    class Meta(TimelineEntryBase.Meta):
        verbose_name_plural = "virtual account timeline entries"
        constraints = [event_once("virtual_account", name="virtual_account_event_once")]


class RecipientKind(models.TextChoices):
    INDIVIDUAL = "individual", gettext_lazy("Individual")
    COMPANY = "company", gettext_lazy("Company")


class AccountType(models.TextChoices):
    WIRE = "WIRE", gettext_lazy("WIRE (US domestic, ABA routing number)")
    SWIFT = "SWIFT", gettext_lazy("SWIFT (international, BIC)")


class RecipientStatus(models.TextChoices):
    """Dual control: a recipient is payable only once `approved` by a second person."""

    PENDING_APPROVAL = "pending_approval", gettext_lazy("Pending approval")
    APPROVED = "approved", gettext_lazy("Approved")
    REJECTED = "rejected", gettext_lazy("Rejected")
    SUPERSEDED = "superseded", gettext_lazy("Superseded by a change")
    ARCHIVED = "archived", gettext_lazy("Archived")


class Recipient(UpstreamMirror):
    """
    Who a payout pays: a person or a company, their address and bank account (decisions.md 2
    "Recipients"). For SWIFT in a country that uses IBANs, `account_number` holds the IBAN.
    `created_by` is recorded because a payout to a recipient may not be approved by its creator.
    Payouts point here (the payouts app adds the reverse relation).
    """

    live_kind = "recipient"
    # The submission id: a double submit finds this row instead of registering a twin.
    request_key = models.UUIDField(default=uuid.uuid4, editable=False)
    end_user = models.ForeignKey(EndUser, on_delete=models.PROTECT, related_name="recipients")
    kind = models.CharField(max_length=12, choices=RecipientKind.choices)
    first_name = models.CharField(max_length=200, blank=True)
    last_name = models.CharField(max_length=200, blank=True)
    company_name = models.CharField(max_length=200, blank=True)
    email = models.EmailField(blank=True)
    street_name = models.CharField(max_length=200)
    city = models.CharField(max_length=100)
    state = models.CharField(max_length=100, blank=True)
    postal_code = models.CharField(max_length=20, blank=True)
    country = models.CharField(max_length=2)
    account_type = models.CharField(max_length=10, choices=AccountType.choices)
    account_number = models.CharField(max_length=34)
    routing_number = models.CharField(max_length=9, blank=True)
    swift_code = models.CharField(max_length=11, blank=True)
    bank_name = models.CharField(max_length=200, blank=True)
    upstream_created_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="recipients_created"
    )
    # Dual control (docs/directory.md "Dual control"): who approved or rejected it, when, why.
    status = models.CharField(
        max_length=20, choices=RecipientStatus.choices, default=RecipientStatus.PENDING_APPROVAL
    )
    approved_by = staff_link()
    approved_at = models.DateTimeField(null=True, blank=True)
    # How it was approved when no person did: "migration" (accepted under the rules before).
    approval_note = models.CharField(max_length=200, blank=True)
    rejected_by = staff_link()
    rejected_at = models.DateTimeField(null=True, blank=True)
    rejection_reason = models.CharField(max_length=500, blank=True)
    archived_by = staff_link()
    archived_at = models.DateTimeField(null=True, blank=True)
    # The version this one replaces: an approved change is a new upstream recipient.
    supersedes = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="superseded_by",
    )

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [models.Index(fields=["environment", "status"])]
        permissions = [
            ("approve_recipients", "Can approve or reject recipients and their changes"),
        ]
        constraints = [
            *mirror_constraints("recipient"),
            models.CheckConstraint(
                condition=models.Q(account_type="SWIFT") | ~models.Q(routing_number=""),
                name="recipient_wire_has_routing_number",
            ),
            models.CheckConstraint(
                condition=models.Q(account_type="WIRE") | ~models.Q(swift_code=""),
                name="recipient_swift_has_swift_code",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.account_type} …{self.account_number[-4:]})"

    @property
    def display_name(self) -> str:
        if self.kind == RecipientKind.COMPANY:
            return self.company_name
        return f"{self.first_name} {self.last_name}".strip()

    @property
    def masked_account_number(self) -> str:
        return f"…{self.account_number[-4:]}" if self.account_number else ""

    @property
    def is_payable(self) -> bool:
        return self.status == RecipientStatus.APPROVED and self.is_synced


# How pages name a recipient's fields in a change's before/after.
FIELD_LABELS = {
    "kind": gettext_lazy("Recipient is"),
    "first_name": gettext_lazy("First name"),
    "last_name": gettext_lazy("Last name"),
    "company_name": gettext_lazy("Company name"),
    "email": gettext_lazy("Email"),
    "street_name": gettext_lazy("Street and number"),
    "city": gettext_lazy("City"),
    "state": gettext_lazy("State or region"),
    "postal_code": gettext_lazy("Postal code"),
    "country": gettext_lazy("Country"),
    "account_type": gettext_lazy("Bank transfer"),
    "account_number": gettext_lazy("Account number"),
    "routing_number": gettext_lazy("ABA routing number"),
    "swift_code": "SWIFT/BIC",
    "bank_name": gettext_lazy("Bank"),
}


def diff_rows(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(label, before, after) per changed field, for a page."""
    return [(str(FIELD_LABELS.get(k, k)), before.get(k), after.get(k)) for k in before]


class RecipientChangeStatus(models.TextChoices):
    PENDING_APPROVAL = "pending_approval", gettext_lazy("Pending approval")
    APPROVED = "approved", gettext_lazy("Approved")
    REJECTED = "rejected", gettext_lazy("Rejected")


class RecipientChange(models.Model):
    """
    A proposed change of a recipient's names, address or bank details. The upstream has no
    recipient update: once a second person approves, the new details are registered as a new
    upstream recipient (`new_recipient`, created with `request_key`, committed here first) and
    the changed one is superseded. Until then the changed one stays payable as it was.
    `before` and `after` hold the changed fields, account numbers masked to the last four.
    """

    recipient = models.ForeignKey(Recipient, on_delete=models.PROTECT, related_name="changes")
    request_key = models.UUIDField(default=uuid.uuid4, editable=False, unique=True)
    values = models.JSONField(help_text="The checked new values (all fields of the recipient).")
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)
    status = models.CharField(
        max_length=20,
        choices=RecipientChangeStatus.choices,
        default=RecipientChangeStatus.PENDING_APPROVAL,
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    proposed_at = models.DateTimeField(auto_now_add=True)
    decided_by = staff_link()
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    new_recipient = models.OneToOneField(
        Recipient, null=True, blank=True, on_delete=models.PROTECT, related_name="made_by_change"
    )

    class Meta:
        ordering = ("-proposed_at", "-id")
        constraints = [
            models.UniqueConstraint(
                fields=["recipient"],
                condition=models.Q(status="pending_approval"),
                name="recipient_one_pending_change",
            )
        ]

    def __str__(self) -> str:
        return f"change {self.pk} of recipient {self.recipient_id} ({self.status})"

    @property
    def diff_rows(self) -> list[tuple[str, Any, Any]]:
        return diff_rows(self.before, self.after)


class RecipientTimelineEntry(TimelineEntryBase):
    recipient = models.ForeignKey(Recipient, on_delete=models.CASCADE, related_name="timeline")

    class Meta(TimelineEntryBase.Meta):
        verbose_name_plural = "recipient timeline entries"
