"""Settings of alert delivery; owned by alerts/ (docs/alerts.md)."""

import environ

env = environ.Env()

# --- Alert settings (copy into .env.example) -----------------------------------------------------
# ALERTS_DELIVERY_MAX_ATTEMPTS      a delivery (email, webhook) is tried this many times, then
#                                   left failed (the alert itself is never lost).
# ALERTS_WEBHOOK_TIMEOUT_SECONDS    how long one webhook POST may take.
# ALERTS_WEBHOOK_ALLOW_HTTP         accept http:// webhook URLs (local development only).
# PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS  accept webhook URLs on loopback, private, link-local
#                                   (cloud metadata) addresses (local receivers only; SSRF).
ALERTS_DELIVERY_MAX_ATTEMPTS = env.int("ALERTS_DELIVERY_MAX_ATTEMPTS", default=8)
ALERTS_WEBHOOK_TIMEOUT_SECONDS = env.float("ALERTS_WEBHOOK_TIMEOUT_SECONDS", default=5.0)
ALERTS_WEBHOOK_ALLOW_HTTP = env.bool("ALERTS_WEBHOOK_ALLOW_HTTP", default=False)
PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS = env.bool(
    "PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS", default=False
)
