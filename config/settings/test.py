"""Test settings: the embedded default unless DATABASE_URL / REDIS_URL point at real services."""

import os
from urllib.parse import urlsplit

# pytest-xdist runs the suite in worker processes (`make test`): pytest-django gives each worker
# its own test databases, and here each worker gets its own Redis database (REDIS_URL's db + 1 +
# the worker's number), so a flush, a channel group or the task queue stays the worker's. Done
# once per worker: the processes a test starts inherit the shifted URL and the marker.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST_WORKER and os.environ.get("REDIS_URL") and not os.environ.get("PAYOPS_TEST_REDIS_WORKER"):
    _redis = urlsplit(os.environ["REDIS_URL"])
    _db = int(_redis.path.strip("/") or 0) + 1 + int(_XDIST_WORKER.removeprefix("gw"))
    os.environ["REDIS_URL"] = _redis._replace(path=f"/{_db}").geturl()
    os.environ["PAYOPS_TEST_REDIS_WORKER"] = _XDIST_WORKER

from .base import *  # noqa: F403
from .base import BASE_DIR, DATABASES, INSTALLED_APPS, MIDDLEWARE, env
from .emulator_guest import *  # noqa: F403
from .emulator_guest import install_emulator

# As in local settings: the emulator and the sandbox tools are guests here, never in production.
INSTALLED_APPS, MIDDLEWARE, DATABASES, DATABASE_ROUTERS = install_emulator(
    INSTALLED_APPS, MIDDLEWARE, DATABASES, BASE_DIR
)
INSTALLED_APPS = [*INSTALLED_APPS, "sandbox"]

PAYOPS_ENVIRONMENT = "test"
DEBUG = False
SECRET_KEY = "test-only-not-a-secret"
ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
PAYOPS_ENCRYPTION_KEYS = ["dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE="]
EMULATOR_CONTROL_TOKEN = "test-emulator-token"
# Nothing listens on the discard port: tests start their own emulators (a developer's `make run`
# on :8001 is never touched; the sandbox bootstrap then mounts the emulator in-process).
EMULATOR_URL = "http://127.0.0.1:9"
PAYOPS_SEED_DEMO_STAFF = True
# As in local settings; tests that receive events serve the back office and set their own.
WEBHOOKS_PUBLIC_BASE_URL = env("WEBHOOKS_PUBLIC_BASE_URL", default="http://127.0.0.1:8000")
# The unit tests keep their data in an uncommitted transaction that only the test thread sees:
# the receiver runs there (live tests and benchmarks serve with its own threads, see ADR 0024).
WEBHOOKS_RECEIVER_THREADS = env.int("WEBHOOKS_RECEIVER_THREADS", default=0)
# Tests start the event processors they need (tests/webhooks/test_processor.py); a worker a test
# spawns (or a post_spawn a test sends) must not start one that outlives the test's database.
WEBHOOKS_PROCESSOR_IN_WORKERS = env.bool("WEBHOOKS_PROCESSOR_IN_WORKERS", default=False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not :memory:, so that live servers in other threads and processes share it.
    DATABASES["default"]["TEST"] = {
        "NAME": env("PAYOPS_TEST_SQLITE_PATH", default=str(BASE_DIR / "var" / "test.sqlite3"))
    }
if DATABASES["emulator"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["emulator"]["TEST"] = {
        "NAME": env(
            "PAYOPS_TEST_EMULATOR_SQLITE_PATH",
            default=str(BASE_DIR / "var" / "test-emulator.sqlite3"),
        )
    }
# On PostgreSQL, the test suite's flush deletes rows instead of truncating tables (see the module).
for _alias in ("default", "emulator"):
    if DATABASES[_alias]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES[_alias]["ENGINE"] = "config.test_postgresql"
AXES_ENABLED = env.bool("PAYOPS_TEST_AXES", default=True)
# Live servers, emulators and concurrency tests run many threads in the test process, each holding
# a pooled connection while it works: a production-sized pool (10) makes them wait on each other.
for _alias in ("default", "emulator"):
    _options = DATABASES[_alias].get("OPTIONS", {})
    if isinstance(_options, dict) and isinstance(_options.get("pool"), dict):
        _options["pool"] = {**_options["pool"], "max_size": env.int("PAYOPS_TEST_POOL_MAX", 30)}
