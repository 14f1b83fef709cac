"""Settings of the upstream gateway (timeouts, retries, limits, call log); owned by gateway/."""

import environ

env = environ.Env()

# --- Gateway settings (copy into .env.example) ---------------------------------------------------
# GATEWAY_API_VERSION              X-Api-Version header sent on every upstream call.
# GATEWAY_CONNECT_TIMEOUT          seconds to open a connection.
# GATEWAY_READ_TIMEOUT             seconds to wait for a response.
# GATEWAY_HEALTH_TIMEOUT           seconds the readiness probe waits for the upstream.
# GATEWAY_MAX_ATTEMPTS             attempts in all for a call gateway.retry_policy lets retry.
# GATEWAY_BACKOFF_BASE             first backoff in seconds (doubles each attempt, full jitter).
# GATEWAY_BACKOFF_MAX              cap of one backoff in seconds.
# GATEWAY_TOKEN_REFRESH_MARGIN     seconds before expires_in at which a token is renewed.
# GATEWAY_LIMITER_WAIT             seconds a staff call waits for a rate slot before giving up.
# GATEWAY_BACKGROUND_LIMITER_WAIT  seconds a background call waits for a rate slot.
# GATEWAY_LEASE_SECONDS            expiry of a concurrency lease, renewed every third of it while
#                                  the request is in flight: a killed process's slot frees as fast.
# GATEWAY_CALL_LOG_RETENTION_DAYS  days of upstream call log kept by gateway_prune_calls.
# GATEWAY_CALL_LOG_BODY_LIMIT      characters of each (redacted) body stored in the call log.
GATEWAY_API_VERSION = env("GATEWAY_API_VERSION", default="2026-04-14")
GATEWAY_CONNECT_TIMEOUT = env.float("GATEWAY_CONNECT_TIMEOUT", default=5.0)
GATEWAY_READ_TIMEOUT = env.float("GATEWAY_READ_TIMEOUT", default=20.0)
GATEWAY_HEALTH_TIMEOUT = env.float("GATEWAY_HEALTH_TIMEOUT", default=3.0)
GATEWAY_MAX_ATTEMPTS = env.int("GATEWAY_MAX_ATTEMPTS", default=4)
GATEWAY_BACKOFF_BASE = env.float("GATEWAY_BACKOFF_BASE", default=0.25)
GATEWAY_BACKOFF_MAX = env.float("GATEWAY_BACKOFF_MAX", default=8.0)
GATEWAY_TOKEN_REFRESH_MARGIN = env.int("GATEWAY_TOKEN_REFRESH_MARGIN", default=300)
GATEWAY_LIMITER_WAIT = env.float("GATEWAY_LIMITER_WAIT", default=30.0)
GATEWAY_BACKGROUND_LIMITER_WAIT = env.float("GATEWAY_BACKGROUND_LIMITER_WAIT", default=120.0)
GATEWAY_LEASE_SECONDS = env.float("GATEWAY_LEASE_SECONDS", default=3.0)
GATEWAY_CALL_LOG_RETENTION_DAYS = env.int("GATEWAY_CALL_LOG_RETENTION_DAYS", default=30)
GATEWAY_CALL_LOG_BODY_LIMIT = env.int("GATEWAY_CALL_LOG_BODY_LIMIT", default=4000)
# GATEWAY_RATE_WINDOW_MARGIN       seconds added to the 1-second window (clock granularity).
GATEWAY_RATE_WINDOW_MARGIN = env.float("GATEWAY_RATE_WINDOW_MARGIN", default=0.005)
# GATEWAY_TOKEN_REFRESH_EVERY      seconds between runs of the proactive token renewal schedule.
GATEWAY_TOKEN_REFRESH_EVERY = env.int("GATEWAY_TOKEN_REFRESH_EVERY", default=300)
# GATEWAY_LEASE_LINGER             seconds a finished call still holds its concurrency slot.
GATEWAY_LEASE_LINGER = env.float("GATEWAY_LEASE_LINGER", default=0.05)
# GATEWAY_CONNECTION_REUSE         keep connections alive between calls (one client per process).
GATEWAY_CONNECTION_REUSE = env.bool("GATEWAY_CONNECTION_REUSE", default=True)
# GATEWAY_KEEPALIVE_EXPIRY         seconds an idle connection is kept; below the upstream's own
#                                  keep-alive (uvicorn: 5 s) so we never reuse one it is closing.
GATEWAY_KEEPALIVE_EXPIRY = env.float("GATEWAY_KEEPALIVE_EXPIRY", default=4.0)
# GATEWAY_UPSTREAM_MAX_SECONDS     the longest the upstream is presumed to work on one request: a
#                                  call whose caller timed out keeps its slot (and its connection)
#                                  until the upstream answers or this many seconds after sending.
GATEWAY_UPSTREAM_MAX_SECONDS = env.float("GATEWAY_UPSTREAM_MAX_SECONDS", default=60.0)
# GATEWAY_LEARNED_LIMIT_SECONDS    how long a concurrency limit inferred from a refusal is kept
#                                  before the configured one is tried again.
GATEWAY_LEARNED_LIMIT_SECONDS = env.float("GATEWAY_LEARNED_LIMIT_SECONDS", default=600.0)
