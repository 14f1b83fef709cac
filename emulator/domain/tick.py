"""The domain's clock-driven work: account activation and payout steps (PERIODIC_JOBS, /tick)."""

from __future__ import annotations

from emulator.domain.accounts import accounts_activate_due
from emulator.domain.payout_progress import payouts_step_due


def tick() -> dict[str, int]:
    """Runs every due transition once: accounts activate, each due payout moves one step."""
    return {"activated_accounts": accounts_activate_due(), "payout_steps": payouts_step_due()}


def tick_job() -> None:
    """PERIODIC_JOBS entry."""
    tick()
