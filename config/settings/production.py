"""Production: PostgreSQL with a pool, Redis for cache, channels and tasks; no secret defaults."""

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import env

PAYOPS_ENVIRONMENT = "production"
DEBUG = False


def _required(name: str) -> str:
    value = env(name, default="")
    if not value:
        raise ImproperlyConfigured(
            f"{name} is not set. Production settings refuse to start without it; "
            "see .env.example for what it should hold."
        )
    return str(value)


SECRET_KEY = _required("DJANGO_SECRET_KEY")
_required("DATABASE_URL")
_required("REDIS_URL")
ALLOWED_HOSTS = [h for h in _required("DJANGO_ALLOWED_HOSTS").split(",") if h.strip()]
PAYOPS_ENCRYPTION_KEYS = [k for k in _required("PAYOPS_ENCRYPTION_KEYS").split(",") if k.strip()]
PAYOPS_SEED_DEMO_STAFF = False
# Passkeys belong to the site's own host name, over HTTPS.
OTP_WEBAUTHN_RP_ID = env("PAYOPS_WEBAUTHN_RP_ID", default=ALLOWED_HOSTS[0])
OTP_WEBAUTHN_ALLOWED_ORIGINS = env.list(
    "PAYOPS_WEBAUTHN_ALLOWED_ORIGINS", default=[f"https://{OTP_WEBAUTHN_RP_ID}"]
)
# Payout notifications by email: SMTP (EMAIL_URL); without it, the host's own MTA on port 25.
MAILERS = mailers_from_url(env("EMAIL_URL", default="smtp://localhost:25"))  # noqa: F405

SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
