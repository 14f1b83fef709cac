"""Payouts: previews, supporting documents, OTP, maker-checker approval and status tracking."""
