"""The emulator as a guest: its settings and how local, test and emulator settings install it.

Production never imports this module: the emulator, its tables, URLs, admin and control token
exist only where a settings module below calls `install_emulator` (ADR 0007).
"""

from pathlib import Path
from typing import Any

import environ

env = environ.Env()

# The database alias of the emulator's tables (emulator.database.EmulatorRouter sends them there).
EMULATOR_DATABASE_ALIAS = "emulator"

# Token guarding /_control/; required by the emulator settings (an emulator on its own).
EMULATOR_CONTROL_TOKEN = env("EMULATOR_CONTROL_TOKEN", default="")
# Where the emulator listens when run as its own process (make emulator / make run).
EMULATOR_URL = env("EMULATOR_URL", default="http://127.0.0.1:8001")

# --- The emulator's edge: tokens, limits, clock (copy into .env.example) -------------------------
# EMULATOR_TOKEN_TTL_SECONDS=86400      lifetime of /sandbox/auth tokens (as the live sandbox)
# EMULATOR_PRODUCTION_TOKEN_TTL_SECONDS=3600  lifetime of /auth tokens (as the documents say)
# EMULATOR_RATE_PER_SECOND=10           default requests per second per API key
# EMULATOR_MAX_CONCURRENT=2             default concurrent requests per API key
# EMULATOR_WEEKLY_QUOTA=10000           default requests per ISO week per API key
# EMULATOR_PENALTY_MARKUP=0.002         FX surcharge 18:00-08:00 America/New_York and at weekends
# EMULATOR_QUOTE_LIFETIME_SECONDS=600   lifetime of a quote from POST /v1/quotations
# EMULATOR_LOOP_INTERVAL=1              seconds between runs of the periodic jobs (emulator.loop)
# EMULATOR_JWT_SECRET=                  HS256 key of the tokens (default: from SECRET_KEY)
EMULATOR_TOKEN_TTL_SECONDS = env.int("EMULATOR_TOKEN_TTL_SECONDS", default=86400)
EMULATOR_PRODUCTION_TOKEN_TTL_SECONDS = env.int(
    "EMULATOR_PRODUCTION_TOKEN_TTL_SECONDS", default=3600
)
EMULATOR_RATE_PER_SECOND = env.int("EMULATOR_RATE_PER_SECOND", default=10)
EMULATOR_MAX_CONCURRENT = env.int("EMULATOR_MAX_CONCURRENT", default=2)
EMULATOR_WEEKLY_QUOTA = env.int("EMULATOR_WEEKLY_QUOTA", default=10000)
EMULATOR_PENALTY_MARKUP = env.str("EMULATOR_PENALTY_MARKUP", default="0.002")
EMULATOR_QUOTE_LIFETIME_SECONDS = env.int("EMULATOR_QUOTE_LIFETIME_SECONDS", default=600)
EMULATOR_LOOP_INTERVAL = env.float("EMULATOR_LOOP_INTERVAL", default=1.0)
EMULATOR_JWT_SECRET = env("EMULATOR_JWT_SECRET", default="")

# --- The emulator's domain: accounts, payouts, webhooks ----------------------------------------
# EMULATOR_VA_ACTIVATION_SECONDS=5            virtual account: activating -> active (emulator clock)
# EMULATOR_PAYOUT_STEP_SECONDS=3              one payout state step per this many seconds
# EMULATOR_WEBHOOK_RETRY_DELAYS=60,300,900,3600   delays before retries 1..4 (emulator clock)
# EMULATOR_WEBHOOK_ROTATION_OVERLAP_SECONDS=60    queued deliveries keep the old secret this long
# EMULATOR_WEBHOOK_LEASE_SECONDS=30               a delivery stuck "sending" longer is retried
EMULATOR_VA_ACTIVATION_SECONDS = env.float("EMULATOR_VA_ACTIVATION_SECONDS", default=5.0)
EMULATOR_PAYOUT_STEP_SECONDS = env.float("EMULATOR_PAYOUT_STEP_SECONDS", default=3.0)
EMULATOR_WEBHOOK_RETRY_DELAYS = env("EMULATOR_WEBHOOK_RETRY_DELAYS", default="60,300,900,3600")
EMULATOR_WEBHOOK_ROTATION_OVERLAP_SECONDS = env.float(
    "EMULATOR_WEBHOOK_ROTATION_OVERLAP_SECONDS", default=60.0
)
EMULATOR_WEBHOOK_LEASE_SECONDS = env.float("EMULATOR_WEBHOOK_LEASE_SECONDS", default=30.0)


def emulator_database(default: dict[str, Any], sqlite_path: str) -> dict[str, Any]:
    """
    The emulator's own database, so a back-office write transaction never stalls the emulator:
    EMULATOR_DATABASE_URL when set; else beside the default one (its own SQLite file, or a
    PostgreSQL database named after the default one with "_emulator").
    """
    url = env("EMULATOR_DATABASE_URL", default="")
    if url:
        config: dict[str, Any] = environ.Env.db_url_config(url)
        if config["ENGINE"] == "django.db.backends.postgresql":
            config = {
                **default,
                **{k: config[k] for k in ("NAME", "USER", "PASSWORD", "HOST", "PORT")},
            }
        return config
    if default["ENGINE"] == "django.db.backends.sqlite3":
        return {**default, "NAME": sqlite_path, "TEST": {}}
    return {**default, "NAME": f"{default['NAME']}_emulator", "TEST": {}}


def install_emulator(
    installed_apps: list[str], middleware: list[str], databases: dict[str, Any], base_dir: Path
) -> tuple[list[str], list[str], dict[str, Any], list[str]]:
    """(INSTALLED_APPS, MIDDLEWARE, DATABASES, DATABASE_ROUTERS) with the emulator as a guest."""
    sqlite_path = env("EMULATOR_SQLITE_PATH", default=str(base_dir / "var" / "emulator.sqlite3"))
    # Right after WhiteNoise: the URLconf switch must happen before anything resolves a URL.
    position = middleware.index("whitenoise.middleware.WhiteNoiseMiddleware") + 1
    return (
        [*installed_apps, "emulator"],
        [
            *middleware[:position],
            "emulator.middleware.EmulatorURLConfMiddleware",
            *middleware[position:],
        ],
        {
            **databases,
            EMULATOR_DATABASE_ALIAS: emulator_database(databases["default"], sqlite_path),
        },
        ["emulator.database.EmulatorRouter"],
    )
