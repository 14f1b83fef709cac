"""Settings of the webhook receiver, processing and retention; owned by webhooks/."""

import environ

env = environ.Env()

# --- Webhook settings (copy into .env.example) ---------------------------------------------------
# WEBHOOKS_PUBLIC_BASE_URL            how the upstream reaches this back office (https://...); the
#                                     receiver URL registered upstream is joined onto it. Local and
#                                     test settings default to the web process, 127.0.0.1:8000.
# WEBHOOKS_MAX_BODY_BYTES             larger bodies are answered 413 (stored truncated).
# WEBHOOKS_ROTATION_OVERLAP_SECONDS   how long the previous secret stays accepted after a rotation.
# WEBHOOKS_INVALID_DELIVERIES_PER_HOUR  invalid deliveries stored per endpoint and hour (then only
#                                     counted), so a flood of junk cannot fill the database.
# WEBHOOKS_INVALID_BODY_LIMIT         bytes of an invalid delivery's body that are kept.
# WEBHOOKS_DELIVERY_RETENTION_DAYS    raw deliveries older than this are pruned; events are kept.
# WEBHOOKS_PROCESS_MAX_ATTEMPTS       failed processing is retried this many times, then left
#                                     failed for a person to reprocess.
# WEBHOOKS_RETRY_BASE_SECONDS         first retry delay (doubles each attempt).
# WEBHOOKS_RETRY_MAX_SECONDS          cap of one retry delay.
# WEBHOOKS_SILENCE_MINUTES            "no valid event for N minutes while objects are in flight"
#                                     (open payouts among them): a health and dashboard warning.
# WEBHOOKS_CATCH_UP_LIMIT             records of each kind re-read after a registration (catch-up).
WEBHOOKS_PUBLIC_BASE_URL = env("WEBHOOKS_PUBLIC_BASE_URL", default="")
WEBHOOKS_MAX_BODY_BYTES = env.int("WEBHOOKS_MAX_BODY_BYTES", default=256 * 1024)
WEBHOOKS_ROTATION_OVERLAP_SECONDS = env.int("WEBHOOKS_ROTATION_OVERLAP_SECONDS", default=900)
WEBHOOKS_INVALID_DELIVERIES_PER_HOUR = env.int("WEBHOOKS_INVALID_DELIVERIES_PER_HOUR", default=500)
WEBHOOKS_INVALID_BODY_LIMIT = env.int("WEBHOOKS_INVALID_BODY_LIMIT", default=16 * 1024)
WEBHOOKS_DELIVERY_RETENTION_DAYS = env.int("WEBHOOKS_DELIVERY_RETENTION_DAYS", default=30)
WEBHOOKS_PROCESS_MAX_ATTEMPTS = env.int("WEBHOOKS_PROCESS_MAX_ATTEMPTS", default=8)
WEBHOOKS_RETRY_BASE_SECONDS = env.int("WEBHOOKS_RETRY_BASE_SECONDS", default=30)
WEBHOOKS_RETRY_MAX_SECONDS = env.int("WEBHOOKS_RETRY_MAX_SECONDS", default=3600)
WEBHOOKS_SILENCE_MINUTES = env.int("WEBHOOKS_SILENCE_MINUTES", default=30)
WEBHOOKS_CATCH_UP_LIMIT = env.int("WEBHOOKS_CATCH_UP_LIMIT", default=100)

# --- Receiver threads and the event processor (ADR 0024) -----------------------------------------
# WEBHOOKS_RECEIVER_THREADS           threads of the receiver's own pool in each web process; each
#                                     keeps its database connection between deliveries (Django's
#                                     ASGI handler would open and close one per request). 0: run
#                                     in Django's per-request thread instead (the unit tests do:
#                                     they hold their data in an uncommitted transaction).
# WEBHOOKS_RECEIVER_CONN_MAX_AGE      seconds a receiver thread keeps one connection.
# WEBHOOKS_PROCESSOR_IN_WORKERS       run an event processor thread in every task worker process.
# WEBHOOKS_PROCESSOR_POLL_SECONDS     how often a processor looks when no wake-up came.
WEBHOOKS_RECEIVER_THREADS = env.int("WEBHOOKS_RECEIVER_THREADS", default=4)
WEBHOOKS_RECEIVER_CONN_MAX_AGE = env.int("WEBHOOKS_RECEIVER_CONN_MAX_AGE", default=300)
WEBHOOKS_PROCESSOR_IN_WORKERS = env.bool("WEBHOOKS_PROCESSOR_IN_WORKERS", default=True)
WEBHOOKS_PROCESSOR_POLL_SECONDS = env.float("WEBHOOKS_PROCESSOR_POLL_SECONDS", default=1.0)
