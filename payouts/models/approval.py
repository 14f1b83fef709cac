"""Approval records: the policy's versions and rules, each approval, the notices to staff."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from console.sentences import Summary
from payouts.approval.rules import ChainStep, LimitSpec, RuleSpec


class ApprovalPolicy(models.Model):
    """
    One published version of the approval policy. Versions are never edited: a change publishes
    the next version, and a payout keeps the version (and the count) it was submitted under, so
    a change applies only to payouts submitted after it.
    """

    version = models.PositiveIntegerField(unique=True)
    default_required = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1)]
    )
    note = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Amount limits checked at submission: [{"subject", "amount", "currency", "days"}], exact
    # decimals as strings (rules.LimitSpec).
    limits = models.JSONField(default=list, blank=True)
    # Roles allowed to approve a recipient (accounts' dual control asks the policy in force).
    recipient_approver_roles = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ("-version",)
        verbose_name_plural = "approval policies"
        permissions = [("manage_approval_policy", "Can publish a new approval policy")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(default_required__gte=1),
                name="approval_policy_default_at_least_one",
            )
        ]

    def __str__(self) -> str:
        return f"approval policy v{self.version}"

    def specs(self) -> list[RuleSpec]:
        return [rule.spec() for rule in self.rules.all()]

    def limit_specs(self) -> list[LimitSpec]:
        return [limit_from_json(item) for item in self.limits]


def limit_to_json(limit: LimitSpec) -> dict[str, object]:
    return {
        "subject": limit.subject,
        "amount": str(limit.amount),
        "currency": limit.currency.upper(),
        "days": limit.days,
    }


def limit_from_json(item: dict[str, object]) -> LimitSpec:
    return LimitSpec(
        subject=str(item["subject"]),
        amount=Decimal(str(item["amount"])),
        currency=str(item["currency"]),
        days=int(str(item.get("days", 0))),
    )


def chain_to_json(chain: tuple[ChainStep, ...] | list[ChainStep]) -> list[dict[str, object]]:
    return [{"role": step.role, "count": step.count} for step in chain]


def chain_from_json(items: list[dict[str, object]]) -> tuple[ChainStep, ...]:
    return tuple(ChainStep(str(item["role"]), int(str(item["count"]))) for item in items or [])


class ApprovalRule(models.Model):
    """A line of a policy: from `min_amount` (in `currency`), on `rail` and `mode`, N approvers."""

    class Mode(models.TextChoices):
        ANY = "", gettext_lazy("Any mode")
        FIAT = "fiat", gettext_lazy("Fiat")
        CRYPTO = "crypto", gettext_lazy("Crypto")

    policy = models.ForeignKey(ApprovalPolicy, on_delete=models.CASCADE, related_name="rules")
    min_amount = models.DecimalField(
        max_digits=14, decimal_places=2, default=Decimal("0"), validators=[MinValueValidator(0)]
    )
    currency = models.CharField(max_length=8, blank=True, help_text="Empty: any currency.")
    rail = models.CharField(max_length=16, blank=True, help_text="Empty: any payment rail.")
    mode = models.CharField(max_length=8, blank=True, choices=Mode.choices)
    required_approvals = models.PositiveSmallIntegerField(validators=[MinValueValidator(1)])
    # Ordered steps [{"role", "count"}] ("" any approver); empty: one step of required_approvals.
    chain = models.JSONField(default=list, blank=True)
    country = models.CharField(max_length=2, blank=True, help_text="Empty: any country.")
    channel = models.CharField(max_length=8, blank=True, help_text="page, api; empty: any.")
    maker_ids = models.JSONField(default=list, blank=True)
    maker_roles = models.JSONField(default=list, blank=True)
    recipient_younger_than_days = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ("policy", "min_amount", "id")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(required_approvals__gte=1),
                name="approval_rule_required_at_least_one",
            )
        ]

    def __str__(self) -> str:
        scope = " ".join(filter(None, [self.currency, self.rail, self.mode])) or "any payout"
        return f"{scope} from {self.min_amount}: {self.required_approvals} approver(s)"

    def spec(self) -> RuleSpec:
        return RuleSpec(
            required_approvals=self.required_approvals,
            min_amount=self.min_amount,
            currency=self.currency,
            rail=self.rail,
            mode=self.mode,
            chain=chain_from_json(self.chain),
            country=self.country,
            channel=self.channel,
            maker_ids=frozenset(int(pk) for pk in self.maker_ids),
            maker_roles=frozenset(str(role) for role in self.maker_roles),
            recipient_younger_than_days=self.recipient_younger_than_days,
        )


class Approval(models.Model):
    """One person's approval of one payout in one round; a voided round no longer counts."""

    payout = models.ForeignKey("payouts.Payout", on_delete=models.CASCADE, related_name="approvals")
    approver = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payout_approvals"
    )
    round = models.PositiveIntegerField()
    step = models.PositiveSmallIntegerField(default=0)  # the chain step it filled (0-based)
    created_at = models.DateTimeField(default=timezone.now)
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.CharField(max_length=200, blank=True)
    # The second factor behind this approval (staff.step_up.Proof): which kind (totp, passkey,
    # recovery_code, api_token) and when it was verified; blank for approvals made before.
    second_factor_method = models.CharField(max_length=20, blank=True)
    second_factor_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("created_at", "pk")
        constraints = [
            # The database's own refusal of a person counting twice in a round.
            models.UniqueConstraint(
                fields=["payout", "approver", "round"], name="approval_once_per_person_and_round"
            )
        ]

    def __str__(self) -> str:
        return f"approval of payout {self.payout_id} by {self.approver_id} (round {self.round})"


class NotificationKind(models.TextChoices):
    WAITING_FOR_APPROVAL = "waiting", gettext_lazy("Waiting for your approval")
    REJECTED = "rejected", gettext_lazy("Your payout was rejected")
    READY_FOR_OTP = "ready_for_otp", gettext_lazy("Approved: the code can be sent")
    FAILED = "failed", gettext_lazy("Payout failed")
    RETURNED = "returned", gettext_lazy("Payout returned")
    CHARGE_DIFFERS = "charge_differs", gettext_lazy("Charged differs from what was shown")


class PayoutNotification(models.Model):
    """A message for one staff member about one payout, on the dashboard (and sent by email)."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="payout_notifications"
    )
    payout = models.ForeignKey(
        "payouts.Payout", on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=16, choices=NotificationKind.choices)
    # The record, in English (emails' fallback, search); people read `text()`.
    message = models.CharField(max_length=300)
    # The same sentence as a message and its parameters (console.sentences), translated when
    # read, like an alert's summary; null for a row older than it (then `message` is shown).
    message_json = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=["recipient", "read_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: payout {self.payout_id}"

    def text(self) -> str:
        """The sentence in the active language; the stored English text when it has none."""
        sentence = Summary.from_json(self.message_json)
        return self.message if sentence is None else sentence.render(fallback=self.message)
