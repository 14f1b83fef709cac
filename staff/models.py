"""Staff logins (email is the username), their roles, and the audit trail of what they did."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import models
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy

from staff.step_up import proof_of


class StaffUserManager(BaseUserManager["StaffUser"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra: Any) -> StaffUser:
        if not email:
            raise ValueError("A staff user needs an email address.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra: Any) -> StaffUser:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class StaffUser(AbstractBaseUser, PermissionsMixin):  # type: ignore[django-manager-missing]
    """A person who works in the back office; roles are groups (see staff.roles)."""

    email = models.EmailField(unique=True)
    full_name = models.CharField(max_length=150, blank=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False, help_text="May log in to the Django admin site.")
    date_joined = models.DateTimeField(default=timezone.now)
    # Bumped when an admin resets the person's second factor: every session they hold ends.
    session_epoch = models.PositiveIntegerField(default=0, editable=False)
    # The language the back office speaks to this person (pages, emails); blank: the browser's.
    language = models.CharField(max_length=10, blank=True, choices=settings.LANGUAGES)

    objects = StaffUserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    class Meta:
        verbose_name = "staff user"
        verbose_name_plural = "staff users"
        ordering = ("email",)
        # Capabilities of the back office, declared here until each app has models of its own;
        # roles (staff.roles) are groups of these, and pages check them, never role names.
        permissions = [
            ("view_finance", "Can see finance pages (quotes, payouts)"),
            ("initiate_payout", "Can create quotes and initiate payouts"),
            ("approve_payout", "Can approve or reject payouts"),
            ("view_compliance", "Can see end users, accounts and recipients"),
            ("manage_end_users", "Can create and update end users, accounts and recipients"),
            ("manage_environments", "Can manage upstream environments and their credentials"),
            ("view_call_log", "Can see the upstream call log"),
            ("view_system_health", "Can see system health"),
            ("view_audit_log", "Can see the audit trail"),
        ]

    def __str__(self) -> str:
        return self.email

    def _get_session_auth_hash(self, secret: str | None = None) -> str:
        # Sessions hold this hash; a new epoch (a second-factor reset) no longer matches it.
        # Epoch 0 keeps Django's own hash, so existing sessions survive this field's arrival.
        if not self.session_epoch:
            return str(super()._get_session_auth_hash(secret=secret))  # type: ignore[misc]
        return salted_hmac(
            "staff.StaffUser.session_epoch",
            f"{self.password}:{self.session_epoch}",
            secret=secret,
            algorithm="sha256",
        ).hexdigest()

    def get_full_name(self) -> str:
        return self.full_name or self.email

    def get_short_name(self) -> str:
        return self.full_name.split(" ")[0] if self.full_name else self.email

    def has_perm(self, perm: str, obj: Any = None) -> bool:
        """The person's permission, narrowed to what the request's API token's scopes allow.

        A request authenticated by a personal API token carries a Proof with the token's scopes
        (staff.step_up); every check (services, selectors, templates' `perms`) passes through here,
        so a token never does more than its scopes, nor more than its owner."""
        proof = proof_of(self)
        if proof is not None and proof.permissions is not None and perm not in proof.permissions:
            return False
        return super().has_perm(perm, obj)


class AuditEntry(models.Model):
    """One thing a staff member (or the system) did, kept for review; never edited.

    Tamper evidence (staff.audit_chain, ADR 0019): entries form one chain in `seq` order; each
    `entry_hash` is SHA-256 over the entry's canonical fields and `prev_hash`, the previous
    entry's hash. Editing a row, or deleting one, breaks the chain where it happened.
    """

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="audit_entries",
    )
    action = models.CharField(max_length=100, db_index=True)
    target_type = models.CharField(max_length=100, blank=True)
    target_id = models.CharField(max_length=100, blank=True)
    details = models.JSONField(default=dict, blank=True)
    # What the target looked like before and after the action (None: not recorded), redacted
    # like details; the audit page shows them as a diff.
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # The chain: 1, 2, 3... with no gap; unique, so two writers can never fork it.
    seq = models.PositiveBigIntegerField(unique=True, editable=False)
    prev_hash = models.CharField(max_length=64, editable=False)
    entry_hash = models.CharField(max_length=64, editable=False)

    class Meta:
        ordering = ("-at",)
        verbose_name_plural = "audit entries"
        indexes = [
            # The audit page's filters: a person's trail, an object's trail (each newest first).
            models.Index(fields=["actor", "-at"], name="audit_actor_at"),
            models.Index(fields=["target_type", "target_id", "-at"], name="audit_target_at"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor or 'system'} {self.action}"


class ApiToken(models.Model):
    """
    A staff member's personal API token: `Authorization: Bearer <token>` acts as them, limited to
    what its scopes allow (staff.roles.TOKEN_SCOPES), until it expires or is revoked. Only a
    SHA-256 of the token is stored (it is 256 random bits, so a fast hash is enough); the token
    itself is shown once, at creation.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # The first characters, shown so a person can tell their tokens apart (not enough to use one).
    prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Scope names (staff.roles.TOKEN_SCOPES), e.g. ["read", "prepare"].
    scopes = models.JSONField(default=list)
    expires_at = models.DateTimeField()
    # When the step-up that allowed a privileged scope (approve, admin) passed; None otherwise.
    stepped_up_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user_id}"

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and not self.is_expired


class ChangeProposal(models.Model):
    """An admin change one admin proposed and another decides (maker-checker, staff.changes).

    `summary`, `before` and `after` are for people to read and never hold a secret (a new secret
    shows as a fingerprint or "replaced"); `payload` is what the kind needs to apply it, secrets
    in it encrypted by the owning app. `target_version` is the target's version when proposed:
    applying re-reads it and fails the proposal when the target changed meanwhile.
    """

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("Waiting for another admin")
        APPROVED = "approved", gettext_lazy("Approved, being applied")
        APPLIED = "applied", gettext_lazy("Applied")
        REJECTED = "rejected", gettext_lazy("Rejected")
        WITHDRAWN = "withdrawn", gettext_lazy("Withdrawn")
        FAILED = "failed", gettext_lazy("Failed")

    kind = models.CharField(max_length=60, db_index=True)
    target_type = models.CharField(max_length=100, blank=True)
    target_id = models.CharField(max_length=100, blank=True)
    target_label = models.CharField(max_length=200, blank=True)
    target_version = models.CharField(max_length=200, blank=True)
    summary = models.CharField(max_length=300)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    state = models.CharField(
        max_length=20, choices=State.choices, default=State.PENDING, db_index=True
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="change_proposals"
    )
    proposed_at = models.DateTimeField(default=timezone.now, db_index=True)
    # Set where no other admin could decide: the schedule applies it then unless someone decides.
    apply_after = models.DateTimeField(null=True, blank=True, db_index=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="change_decisions",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ("-proposed_at", "-id")
        permissions = [("decide_admin_changes", "Can propose and decide admin changes")]
        indexes = [models.Index(fields=["kind", "target_id", "state"], name="staff_change_target")]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "target_type", "target_id"],
                condition=models.Q(state="pending"),
                name="one_pending_change_per_target",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.state})"

    @property
    def is_pending(self) -> bool:
        return self.state == self.State.PENDING

    def diff_rows(self) -> list[tuple[str, Any, Any]]:
        """(field, before, after) for each field either side shows, for pages and the API."""
        keys = list(dict.fromkeys([*self.before, *self.after]))
        return [(key, self.before.get(key), self.after.get(key)) for key in keys]

    @property
    def readable_rows(self) -> list[tuple[str, Any, Any]]:
        """`diff_rows` as the changes page shows them: each field by its target model's name for
        it, in the active language (`verification_email` -> "Verification email")."""
        from staff.audit_actions import audited_model

        model = audited_model(self.target_type)
        names = (
            {f.name: getattr(f, "verbose_name", "") for f in model._meta.get_fields()}
            if model
            else {}
        )
        return [
            (capfirst(str(names.get(key) or key.replace("_", " "))), before, after)
            for key, before, after in self.diff_rows()
        ]


# The second factor's models live with their code; Django finds them through this module.
from staff.second_factor.models import (  # noqa: E402
    AuthenticatorDevice,
    RecoveryCode,
    RecoveryCodeDevice,
    SecondFactorReset,
)

__all__ = [
    "ApiToken",
    "AuditEntry",
    "AuthenticatorDevice",
    "ChangeProposal",
    "RecoveryCode",
    "RecoveryCodeDevice",
    "SecondFactorReset",
    "StaffUser",
]
