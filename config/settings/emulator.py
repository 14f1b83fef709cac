"""Settings of the upstream emulator (its limits, clock, delays, faults); owned by emulator/."""

import environ

env = environ.Env()

# Token guarding /_control/; required when the emulator runs under production settings.
EMULATOR_CONTROL_TOKEN = env("EMULATOR_CONTROL_TOKEN", default="")
# Where the emulator listens when run as its own process (make emulator / make run).
EMULATOR_URL = env("EMULATOR_URL", default="http://127.0.0.1:8001")

# --- Emulator platform (E1): copy this block into .env.example -----------------------------------
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

# --- Domain half (E2): accounts, payouts, webhooks ------------------------------------------------
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
