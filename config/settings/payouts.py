"""Settings of payouts (supporting documents); owned by payouts/."""

import environ

env = environ.Env()

# --- Payout settings (copy into .env.example) ----------------------------------------------------
# PAYOUT_DOCUMENT_TYPES      comma-separated MIME types accepted, judged by the file's content.
# PAYOUT_DOCUMENT_MAX_BYTES  largest supporting document accepted, in bytes.
PAYOUT_DOCUMENT_TYPES: list[str] = env.list(
    "PAYOUT_DOCUMENT_TYPES", default=["application/pdf", "image/png", "image/jpeg"]
)
PAYOUT_DOCUMENT_MAX_BYTES: int = env.int("PAYOUT_DOCUMENT_MAX_BYTES", default=5 * 1024 * 1024)
