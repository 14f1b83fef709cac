"""Local development: the embedded default (SQLite, in-memory channels, ORM broker, emulator)."""

from .base import *  # noqa: F403
from .base import BASE_DIR, DATABASES, INSTALLED_APPS, MIDDLEWARE, env
from .emulator_guest import *  # noqa: F403
from .emulator_guest import install_emulator

# Dev-only guests, the way cookiecutter-django adds its dev-only apps in local settings: the
# emulator (with its own database) and the sandbox tools that drive it over HTTP.
INSTALLED_APPS, MIDDLEWARE, DATABASES, DATABASE_ROUTERS = install_emulator(
    INSTALLED_APPS, MIDDLEWARE, DATABASES, BASE_DIR
)
INSTALLED_APPS = [*INSTALLED_APPS, "sandbox"]

PAYOPS_ENVIRONMENT = "local"
DEBUG = env.bool("DJANGO_DEBUG", default=True)
SECRET_KEY = env("DJANGO_SECRET_KEY", default="local-development-only-not-a-secret")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
# A fixed development key so that `make run` works out of the box; production requires its own.
PAYOPS_ENCRYPTION_KEYS = env.list(
    "PAYOPS_ENCRYPTION_KEYS", default=["bG9jYWwtZGV2ZWxvcG1lbnQta2V5LW5vdC1zZWNyZXQ="]
)
EMULATOR_CONTROL_TOKEN = env("EMULATOR_CONTROL_TOKEN", default="local-emulator-token")
# Demo staff are seeded only where this is true (never in production).
PAYOPS_SEED_DEMO_STAFF = True
# The web process of `make run`: what the emulator posts events to (the bootstrap registers it).
WEBHOOKS_PUBLIC_BASE_URL = env("WEBHOOKS_PUBLIC_BASE_URL", default="http://127.0.0.1:8000")
