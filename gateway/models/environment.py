"""An upstream environment (sandbox or production): where, how we log in, what we may spend."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from staff import crypto
from staff.redaction import mask

# The credentials staff type in; each is stored encrypted in `<name>_encrypted`.
CREDENTIALS = ("client_id", "password", "api_key")
NOT_SET = "not set"
UNREADABLE = "unreadable: its encryption key was removed; enter it again"

# The upstream is HTTP(S); Django's URLField would also take ftp:// and ftps://.
validate_http_url = URLValidator(
    schemes=["http", "https"], message=gettext_lazy("Enter an http:// or https:// URL.")
)


def validate_no_sandbox_suffix(value: str) -> None:
    """The gateway adds /sandbox itself: a base URL that already ends in it doubles the prefix."""
    path = urlsplit(value).path.rstrip("/")
    if path.lower().endswith("/sandbox"):
        root = value.rstrip("/")[: -len("/sandbox")]
        raise ValidationError(
            gettext(
                "Leave out /sandbox: PayOps adds it to a sandbox environment's calls, so this URL "
                "would send them to …/sandbox/sandbox/…. Enter the service root (%(root)s)."
            ),
            code="sandbox_suffix",
            params={"root": root or value},
        )


class EnvironmentKind(models.TextChoices):
    SANDBOX = "sandbox", gettext_lazy("Sandbox")
    PRODUCTION = "production", gettext_lazy("Production")


class Environment(models.Model):
    """
    One upstream environment. `base_url` is the service root as the upstream documents it
    (`{base_url}`); for sandbox the gateway joins `/sandbox` onto it (interface.md section 9), so
    the stored URL never carries the prefix itself.

    Credentials are stored encrypted (staff.crypto) in the `*_encrypted` columns; read them with
    the `client_id` / `password` / `api_key` properties and write them with `set_credentials()`.
    """

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=EnvironmentKind.choices)
    base_url = models.URLField(
        help_text="Service root (http or https) without the /sandbox prefix.",
        validators=[validate_http_url, validate_no_sandbox_suffix],
    )
    client_id_encrypted = models.TextField(blank=True)
    password_encrypted = models.TextField(blank=True)
    api_key_encrypted = models.TextField(blank=True)
    webhook_secret_encrypted = models.TextField(blank=True)
    previous_webhook_secret_encrypted = models.TextField(blank=True)
    webhook_secret_rotated_at = models.DateTimeField(null=True, blank=True)
    rate_per_second = models.PositiveIntegerField(default=10)
    max_concurrent = models.PositiveIntegerField(default=2)
    weekly_budget = models.PositiveIntegerField(default=10_000)
    background_share = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=0.5,
        help_text="Share of the weekly budget that background work may use before it stops.",
    )
    is_active = models.BooleanField(default=True)
    # When a connection test last authenticated with the current URL and credentials; changing
    # either clears it. Only verified environments may be switched to.
    verified_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Where POST /verification/send delivers the OTP that fiat payouts need (decisions.md 2).
    verification_email = models.EmailField(
        blank=True, help_text="Receives the one-time codes that fiat payouts need."
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("name",)
        constraints = [
            models.CheckConstraint(
                condition=models.Q(background_share__gte=0) & models.Q(background_share__lte=1),
                name="environment_background_share_between_0_and_1",
            ),
            models.CheckConstraint(
                condition=models.Q(rate_per_second__gte=1) & models.Q(max_concurrent__gte=1),
                name="environment_limits_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    @property
    def is_production(self) -> bool:
        return self.kind == EnvironmentKind.PRODUCTION

    @property
    def is_verified(self) -> bool:
        return self.verified_at is not None

    @property
    def api_root(self) -> str:
        """The root every path is joined onto: base URL, plus /sandbox for a sandbox."""
        root = self.base_url.rstrip("/")
        return f"{root}/sandbox" if self.kind == EnvironmentKind.SANDBOX else root

    # Decrypted credentials: only the gateway reads these; never render or log them.
    @property
    def client_id(self) -> str:
        return crypto.decrypt(self.client_id_encrypted) if self.client_id_encrypted else ""

    @property
    def password(self) -> str:
        return crypto.decrypt(self.password_encrypted) if self.password_encrypted else ""

    @property
    def api_key(self) -> str:
        return crypto.decrypt(self.api_key_encrypted) if self.api_key_encrypted else ""

    @property
    def webhook_secret(self) -> str:
        return (
            crypto.decrypt(self.webhook_secret_encrypted) if self.webhook_secret_encrypted else ""
        )

    @property
    def previous_webhook_secret(self) -> str:
        if not self.previous_webhook_secret_encrypted:
            return ""
        return crypto.decrypt(self.previous_webhook_secret_encrypted)

    def set_credentials(
        self,
        *,
        client_id: str | None = None,
        password: str | None = None,
        api_key: str | None = None,
    ) -> None:
        """Encrypt and set the given credentials; None leaves a credential unchanged."""
        if client_id is not None:
            self.client_id_encrypted = crypto.encrypt(client_id)
        if password is not None:
            self.password_encrypted = crypto.encrypt(password)
        if api_key is not None:
            self.api_key_encrypted = crypto.encrypt(api_key)

    def credential_readable(self, name: str) -> bool:
        """False when a stored credential can no longer be decrypted (its key rotated away)."""
        try:
            getattr(self, name)
        except crypto.SecretDecryptionError:
            return False
        return True

    def credential_masked(self, name: str) -> str:
        """What a person may see of a credential: not set, its last characters, or unreadable."""
        if name not in CREDENTIALS or not getattr(self, f"{name}_encrypted"):
            return NOT_SET
        try:
            return mask(getattr(self, name))
        except crypto.SecretDecryptionError:
            return UNREADABLE

    @property
    def has_credentials(self) -> bool:
        return bool(self.client_id_encrypted and self.password_encrypted and self.api_key_encrypted)


class StaffEnvironmentChoice(models.Model):
    """The environment a staff member currently works in (the badge on every page)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="environment_choice"
    )
    environment = models.ForeignKey(Environment, on_delete=models.CASCADE, related_name="+")
    chosen_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.user} → {self.environment}"
