"""How long a payout may stay quiet in each state before a person should look: a pure decision.

"Quiet" is no news: no status change and no upstream event (polls that find nothing new are
not news). The upstream documents no durations (decisions.md 3 names the states only), so the
table is ours, set from the sandbox's behaviour (each step takes seconds) with a wide margin for
a real bank's: a payout past its time is worth a look, not yet a fault. States a person owns
(draft, approval) and final ones are absent: waiting for a person is the approvals inbox's job,
and a completed payout only changes again if it is returned, which no one can expect.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from payouts.models import PayoutMode, PayoutStatus

S = PayoutStatus

# The longest quiet that is still normal, per state. Why each:
EXPECTED_QUIET: dict[str, timedelta] = {
    # The release is being sent; `payouts.recover_submitting` re-sends it after 2 minutes.
    S.SUBMITTING: timedelta(minutes=10),
    # Accepted upstream: a fiat payout moves on within seconds in the sandbox.
    S.CREATED: timedelta(minutes=15),
    S.PENDING: timedelta(hours=1),
    # Screening of a crypto deposit.
    S.KYT_PENDING: timedelta(hours=2),
    # The wire itself, and the upstream's manual review: a bank's day.
    S.PROCESSING: timedelta(hours=24),
    S.IN_REVIEW: timedelta(hours=24),
}
# A crypto payout waits in CREATED for its stablecoin deposit; the address lives 60 minutes.
CRYPTO_CREATED = timedelta(minutes=75)


def expected_quiet(*, status: str, mode: str) -> timedelta | None:
    """The longest normal quiet for a payout in `status`, or None when no news is expected."""
    if status == S.CREATED and mode == PayoutMode.CRYPTO:
        return CRYPTO_CREATED
    return EXPECTED_QUIET.get(status)


@dataclass(frozen=True)
class QuietVerdict:
    """A payout quiet past its time: how long it has been, and what was expected."""

    quiet_for: timedelta
    expected: timedelta


def quiet_verdict(
    *, status: str, mode: str, last_news_at: datetime, now: datetime
) -> QuietVerdict | None:
    """None while the payout is within its state's expected time (or expects no news)."""
    expected = expected_quiet(status=status, mode=mode)
    if expected is None:
        return None
    quiet_for = now - last_news_at
    return QuietVerdict(quiet_for, expected) if quiet_for > expected else None
