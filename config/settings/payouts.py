"""Settings of payouts (supporting documents); owned by payouts/."""

from decimal import Decimal

import environ

env = environ.Env()

# --- Payout settings (copy into .env.example) ----------------------------------------------------
# PAYOUT_DOCUMENT_TYPES      comma-separated MIME types accepted, judged by the file's content.
# PAYOUT_DOCUMENT_MAX_BYTES  largest supporting document accepted, in bytes.
# PAYOUT_DOCUMENT_MAX_PIXELS largest image accepted, in pixels (width x height from its header).
PAYOUT_DOCUMENT_TYPES: list[str] = env.list(
    "PAYOUT_DOCUMENT_TYPES", default=["application/pdf", "image/png", "image/jpeg"]
)
PAYOUT_DOCUMENT_MAX_BYTES: int = env.int("PAYOUT_DOCUMENT_MAX_BYTES", default=5 * 1024 * 1024)
PAYOUT_DOCUMENT_MAX_PIXELS: int = env.int("PAYOUT_DOCUMENT_MAX_PIXELS", default=50_000_000)

# --- Maker-checker, initiation and tracking ---------------------------------------------------
# Approvals survive a re-quote whose figures moved by at most this fraction (0.005 = 0.5 %).
PAYOUTS_REQUOTE_TOLERANCE = Decimal(env("PAYOUTS_REQUOTE_TOLERANCE", default="0.005"))
# A payout `submitting` for longer than this is re-sent (same idempotency key) by a schedule.
PAYOUTS_SUBMITTING_STALE_SECONDS = env.int("PAYOUTS_SUBMITTING_STALE_SECONDS", default=120)
# After this many sends without an answer, the payout waits for a person instead.
PAYOUTS_SUBMIT_MAX_ATTEMPTS = env.int("PAYOUTS_SUBMIT_MAX_ATTEMPTS", default=10)
# Payouts not final this long after their last change are polled (webhooks first).
PAYOUTS_POLL_AFTER_SECONDS = env.int("PAYOUTS_POLL_AFTER_SECONDS", default=600)
# A completed payout is still polled (a return may follow) for this many days.
PAYOUTS_RETURN_WATCH_DAYS = env.int("PAYOUTS_RETURN_WATCH_DAYS", default=30)
# Polling keeps to this share of the environment's weekly budget (and within its background
# share, spread over the rest of the week); a pass makes at most this many calls.
PAYOUTS_POLL_SHARE = env.float("PAYOUTS_POLL_SHARE", default=0.08)
PAYOUTS_POLL_MAX_CALLS_PER_PASS = env.int("PAYOUTS_POLL_MAX_CALLS_PER_PASS", default=10)
PAYOUTS_OTP_MAX_TRIES = 5
