"""Payout writes: the entry points other apps call (each lives in its concept's module)."""

from __future__ import annotations

from payouts.approvals import payout_approve, payout_cancel, payout_reject, payout_requote_apply
from payouts.initiation import payout_retry, payout_submit, payouts_recover_submitting
from payouts.otp import payout_otp_confirm, payout_otp_send
from payouts.tracking import payout_apply_event, payouts_poll

__all__ = [
    "payout_apply_event",
    "payout_approve",
    "payout_cancel",
    "payout_otp_confirm",
    "payout_otp_send",
    "payout_reject",
    "payout_requote_apply",
    "payout_retry",
    "payout_submit",
    "payouts_poll",
    "payouts_recover_submitting",
]
