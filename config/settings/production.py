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
# The previous key(s) while sessions signed with them expire (docs/deploy.md, key rotation).
SECRET_KEY_FALLBACKS = env.list("DJANGO_SECRET_KEY_FALLBACKS", default=[])
_required("DATABASE_URL")
_required("REDIS_URL")
ALLOWED_HOSTS = [h for h in _required("DJANGO_ALLOWED_HOSTS").split(",") if h.strip()]
PAYOPS_ENCRYPTION_KEYS = [k for k in _required("PAYOPS_ENCRYPTION_KEYS").split(",") if k.strip()]
PAYOPS_SEED_DEMO_STAFF = False
# One JSON object a log line with the request id, unless PAYOPS_LOG_FORMAT=plain (docs/deploy.md).
PAYOPS_LOG_FORMAT = env("PAYOPS_LOG_FORMAT", default="json")
LOGGING["handlers"]["console"]["formatter"] = "plain" if PAYOPS_LOG_FORMAT == "plain" else "json"  # type: ignore[index]  # noqa: F405
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

# --- Files: no web process keeps state on its own disk (docs/deploy.md) -----------------------
# Supporting documents (and every other upload) live in S3-compatible object storage through
# django-storages: a private bucket, read only through the permission-checked views that stream
# it (never a public URL). Credentials unset: boto3's own chain (instance role, AWS_* variables).
#   PAYOPS_S3_BUCKET       REQUIRED: the bucket (created beforehand, private)
#   PAYOPS_S3_ENDPOINT_URL an S3-compatible server's URL (unset: AWS S3 itself)
#   PAYOPS_S3_REGION       its region; PAYOPS_S3_PREFIX  a key prefix inside the bucket
#   PAYOPS_S3_ACCESS_KEY_ID / PAYOPS_S3_SECRET_ACCESS_KEY  static credentials, if any
#   PAYOPS_S3_ADDRESSING_STYLE  "path" for most self-hosted servers (default "auto")
STORAGES = {
    "default": {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": _required("PAYOPS_S3_BUCKET"),
            "endpoint_url": env("PAYOPS_S3_ENDPOINT_URL", default="") or None,
            "region_name": env("PAYOPS_S3_REGION", default="") or None,
            "access_key": env("PAYOPS_S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env("PAYOPS_S3_SECRET_ACCESS_KEY", default="") or None,
            "location": env("PAYOPS_S3_PREFIX", default=""),
            "addressing_style": env("PAYOPS_S3_ADDRESSING_STYLE", default="") or None,
            "signature_version": "s3v4",
            # Private objects; a name is never reused (a second upload gets its own key).
            "default_acl": None,
            "file_overwrite": False,
            # Should anything ask for a URL, it is signed and short-lived, never public.
            "querystring_auth": True,
            "querystring_expire": 60,
        },
    },
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# The cache (rate budgets, tokens, lockouts) is Redis (base settings, REDIS_URL required) and
# sessions stay in the database (Django's default): a request may land on any web process.
