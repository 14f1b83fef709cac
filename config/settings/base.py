"""Settings shared by every environment; each value is read from the environment."""

from pathlib import Path
from typing import Any

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
# A developer's .env (never committed) is read when present; real environment variables win.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
ALLOWED_HOSTS: list[str] = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# Which environment this is: shown in logs; decides what a dev-only step may do.
PAYOPS_ENVIRONMENT = "base"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    # Serves Swagger UI from ninja's own static files (no CDN, no inline script: CSP stays strict).
    "ninja",
    "django_q",
    "axes",
    # The second factor (staff.second_factor): TOTP apps and passkeys; recovery codes are staff's
    # own (hashed) device, not otp_static, which keeps its tokens in plain text. Authenticator apps
    # are staff's AuthenticatorDevice (seed encrypted); otp_totp stays installed only for its
    # (emptied) table and the migration that moved its rows (ADR 0017); nothing uses TOTPDevice.
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp_webauthn",
    "staff",
    "console",
    "gateway",
    "users",
    "accounts",
    "quotes",
    "payouts",
    "books",
    "analytics",
    "alerts",
    "webhooks",
]

MIDDLEWARE = [
    # First: every later middleware's log lines carry the request's id (console.middleware).
    "console.middleware.request_id_middleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The browser's language (Accept-Language) until staff.middleware.language_middleware knows
    # the person's own choice.
    "django.middleware.locale.LocaleMiddleware",
    # Early: the sign-in middlewares below (session expiry, the second-factor gate) leave messages.
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user carries its Proof (session or token, second factor): staff.step_up.
    "staff.middleware.proof_middleware",
    # A signed-in person's own language (StaffUser.language) wins over the browser's.
    "staff.middleware.language_middleware",
    # ...and signed out when its session has idled or reached its absolute age: staff.sessions.
    "staff.sessions.session_expiry_middleware",
    # request.user.otp_device / is_verified() on the same user object (it keeps its Proof).
    "django_otp.middleware.OTPMiddleware",
    # Until the second factor passes (or enrolment is done), a session reaches only those pages.
    "staff.second_factor.gate.second_factor_gate",
    # A page refused for want of a fresh second factor goes to the step-up prompt (not the API).
    "staff.middleware.StepUpMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "console.middleware.method_not_allowed_middleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.navigation",
                "gateway.context_processors.current_environment",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------------------------
SQLITE_PATH = env("PAYOPS_SQLITE_PATH", default=str(BASE_DIR / "var" / "payops.sqlite3"))


def sqlite_database(path: str) -> dict[str, object]:
    """The embedded default: SQLite in WAL mode with immediate write locks and a patient timeout."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=30000;"
            ),
        },
    }


def postgres_database(url: str) -> dict[str, object]:
    """PostgreSQL through psycopg 3 and its pool (no persistent connections: the pool owns them)."""
    config = environ.Env.db_url_config(url)
    config["CONN_MAX_AGE"] = 0
    options = dict(config.get("OPTIONS", {}))
    options["pool"] = {
        "min_size": env.int("DATABASE_POOL_MIN", default=2),
        "max_size": env.int("DATABASE_POOL_MAX", default=10),
        "timeout": env.int("DATABASE_POOL_TIMEOUT", default=10),
    }
    config["OPTIONS"] = options
    return config


def database_from_env() -> dict[str, object]:
    url = env("DATABASE_URL", default="")
    if not url:
        return sqlite_database(SQLITE_PATH)
    if url.startswith(("postgres://", "postgresql://")):
        return postgres_database(url)
    return environ.Env.db_url_config(url)


DATABASES = {"default": database_from_env()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, cache, channels ---------------------------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
# The socket timeout of a Redis connection that blocks waiting (the channel layer's pop, the
# webhook processor's wake-up list): longer than any such wait, so an empty answer is not an error.
REDIS_BLOCKING_READ_SECONDS = env.float("PAYOPS_REDIS_BLOCKING_READ_SECONDS", default=30.0)

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env("PAYOPS_CACHE_PREFIX", default="payops"),
        }
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # channels-redis waits for a page's next message in a blocking pop of up to 5 s
                # (RedisChannelLayer.brpop_timeout). redis-py 8 gives every read a 5 s socket
                # timeout by default, so an idle page's read timed out just as Redis answered
                # "nothing yet" and the page's consumer died. Reads wait longer than the pop;
                # a dead connection is still noticed.
                "hosts": [{"address": REDIS_URL, "socket_timeout": REDIS_BLOCKING_READ_SECONDS}],
                "prefix": env("PAYOPS_CHANNELS_PREFIX", default="payops"),
            },
        }
    }
else:
    # The embedded default shares one cache between web, worker and emulator processes, so it
    # must live in the database rather than in one process's memory.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "payops_cache",
        }
    }
    # Channels' in-memory layer reaches only its own process: this one also writes each message
    # to a database outbox that every web process with open pages polls (ADR 0012).
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "console.live.layer.OutboxChannelLayer",
            "CONFIG": {"poll_interval": env.float("PAYOPS_LIVE_POLL_SECONDS", default=0.15)},
        }
    }
# How long the live outbox keeps a message (a schedule prunes older ones every minute).
PAYOPS_LIVE_KEEP_SECONDS = env.int("PAYOPS_LIVE_KEEP_SECONDS", default=300)

# --- django-q2 ----------------------------------------------------------------------------------
Q_CLUSTER: dict[str, object] = {
    "name": env("PAYOPS_Q_NAME", default="payops"),
    "workers": env.int("PAYOPS_Q_WORKERS", default=2),
    "timeout": 60,
    "retry": 120,
    "max_attempts": 3,
    "catch_up": False,
    "label": "Task queue",
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"
    # PAYOPS_Q_WAKE_UP  the ORM broker is woken by each queued task (console.task_broker, ADR
    #                   0014): a worker starts a payout's initiation within milliseconds.
    # PAYOPS_Q_POLL     seconds between looks at the task table (with wake-ups: the fallback).
    if env.bool("PAYOPS_Q_WAKE_UP", default=True):
        Q_CLUSTER["broker_class"] = "console.task_broker.WakingOrmBroker"
    Q_CLUSTER["poll"] = env.float("PAYOPS_Q_POLL", default=1)

# /metrics (console.metrics): a Prometheus scraper sends this as a bearer token (empty: only a
# signed-in staff member with staff.view_system_health may read it). PROMETHEUS_MULTIPROC_DIR,
# an environment variable read by prometheus-client itself, sums every process (docs/deploy.md).
PAYOPS_METRICS_TOKEN = env("PAYOPS_METRICS_TOKEN", default="")

# OpenTelemetry tracing (console.tracing), off by default; on, it needs the `otel` extra and is
# configured by the SDK's own variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...).
PAYOPS_OTEL_ENABLED = env.bool("PAYOPS_OTEL_ENABLED", default=False)

# Seconds after which /readyz calls the worker's heartbeat stale.
PAYOPS_HEARTBEAT_MAX_AGE = env.int("PAYOPS_HEARTBEAT_MAX_AGE", default=180)


# --- Email (payout notifications): Django 6.1 mailers; the console unless configured ------------
def mailers_from_url(url: str) -> dict[str, Any]:
    """Django 6.1's MAILERS from one URL (smtp+tls://user:password@host:587, consolemail://)."""
    config = environ.Env.email_url_config(url)
    options = {
        "host": config.get("EMAIL_HOST"),
        "port": config.get("EMAIL_PORT"),
        "username": config.get("EMAIL_HOST_USER"),
        "password": config.get("EMAIL_HOST_PASSWORD"),
        "use_tls": config.get("EMAIL_USE_TLS"),
        "use_ssl": config.get("EMAIL_USE_SSL"),
    }
    smtp = "smtp" in config["EMAIL_BACKEND"]
    return {
        "default": {
            "BACKEND": config["EMAIL_BACKEND"],
            "OPTIONS": {k: v for k, v in options.items() if v not in (None, "")} if smtp else {},
        }
    }


MAILERS = mailers_from_url(env("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="payops@localhost")

# --- i18n, static -------------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
# The back office speaks English, Spanish and Brazilian Portuguese (docs/ui.md, "Languages"): a
# person's own choice (StaffUser.language) wins, then the browser's Accept-Language.
LANGUAGES = [("en", "English"), ("es", "Español"), ("pt-br", "Português (Brasil)")]
# The root templates' catalog, and config's own (the API's generic errors): config is no app.
LOCALE_PATHS = [BASE_DIR / "locale", BASE_DIR / "config" / "locale"]
TIME_ZONE = "UTC"
# Datetimes Django formats (the admin's lists and detail pages) name their zone: config/formats.
FORMAT_MODULE_PATH = ["config.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = BASE_DIR / "var" / "media"

PAYOPS_SEED_DEMO_STAFF = False

# --- Secrets at rest ----------------------------------------------------------------------------
# Comma-separated Fernet keys, newest first; the first encrypts, all decrypt (MultiFernet).
PAYOPS_ENCRYPTION_KEYS: list[str] = env.list("PAYOPS_ENCRYPTION_KEYS", default=[])

# --- Logging ------------------------------------------------------------------------------------
# PAYOPS_LOG_FORMAT  "plain" (the default) or "json": one object a line with the request id
#                    (console.log_filters.JsonFormatter), for production's log shippers.
PAYOPS_LOG_FORMAT = env("PAYOPS_LOG_FORMAT", default="plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "console.log_filters.JsonFormatter"},
    },
    # A refused request (403, 400) is logged as one line, without the traceback of its exception.
    "filters": {
        "one_line_4xx": {"()": "console.log_filters.OneLineClientErrors"},
        "request_id": {"()": "console.log_filters.RequestIdFilter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if PAYOPS_LOG_FORMAT == "json" else "plain",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env("PAYOPS_LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "django.request": {"filters": ["one_line_4xx"]},
        "django.security": {"filters": ["one_line_4xx"]},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # axes announces itself at INFO on every start, drowning management command output.
        "axes": {"level": "WARNING"},
    },
}

# --- Per-concept settings live beside each other, one module a concept ----------------------------
from .alerts import *  # noqa: E402, F403
from .gateway import *  # noqa: E402, F403
from .inputs import *  # noqa: E402, F403
from .payouts import *  # noqa: E402, F403
from .staff import *  # noqa: E402, F403
from .webhooks import *  # noqa: E402, F403
