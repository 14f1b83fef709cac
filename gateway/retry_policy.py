"""What the gateway may send again after a failure: one map, each operation's choice explained.

A failed attempt is retried (same request, same key, backoff with full jitter, through the
limiter, so every retry is counted against the budget like any call) only when sending it again
cannot do something twice that matters:

- `SAFE`: the operation changes nothing upstream, or sending it twice leaves the upstream as
  sending it once would for everything PayOps and its users rely on. Retried on timeouts, dropped
  answers, 5xx and 429.
- `KEYED`: a mutation the upstream deduplicates by its idempotency key (the same key and body
  replay the first answer). Retried only when the call carries a key; without one, as `ONCE`.
- `ONCE`: a mutation a repeat would make twice. Sent once; the caller gets the failure and a
  person decides (e.g. after looking whether it happened).

A 429 is retried whatever the class: the upstream refused the request before handling it (its
limiter runs first), so nothing can happen twice. Permanent failures (4xx) are never retried.
`may_retry` is pure, like the limiter's `decide`, and unit-tested entry by entry.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from gateway.errors import RateLimited, UpstreamError


class Retry(enum.StrEnum):
    SAFE = "safe"
    KEYED = "keyed"
    ONCE = "once"


@dataclass(frozen=True)
class RetryRule:
    retry: Retry
    why: str


_READ = "a read: nothing changes upstream."
_QUOTE = (
    "creates a quote: an offer that moves no money and expires by itself (10 minutes, 15 when "
    "reserved by a preview). A repeat after a lost answer leaves at most one unused quote; "
    "PayOps redeems only the id it received."
)

POLICY: dict[str, RetryRule] = {
    "auth": RetryRule(
        Retry.SAFE,
        "issues a token and changes nothing else: a second one replaces nothing PayOps holds.",
    ),
    "quotation_get": RetryRule(Retry.SAFE, _READ),
    "quotation_create": RetryRule(Retry.SAFE, _QUOTE),
    "quotation_update": RetryRule(
        Retry.SAFE,
        "sets the quote's amount (and restarts its timer): sent twice, the quote ends the same.",
    ),
    "payout_preview": RetryRule(
        Retry.SAFE,
        "prices a payout without making it. With create_quote it also reserves a quote: an "
        "offer that moves no money and expires by itself after 15 minutes; a repeat leaves at "
        "most one unused reservation, and PayOps redeems only the id it received.",
    ),
    "otp_send": RetryRule(
        Retry.SAFE,
        "a new code supersedes the previous one (decisions.md 2): after a lost answer a resend "
        "at worst sends a second email, and only the newest code counts. No payout is released "
        "by sending a code; an approver still enters it.",
    ),
    "payout_initiate": RetryRule(
        Retry.KEYED,
        "moves money: always sent with the payout's key, committed before the first call, so "
        "the upstream replays its first answer instead of paying twice (ADR 0011).",
    ),
    "payout_get": RetryRule(Retry.SAFE, _READ),
    "payout_list": RetryRule(Retry.SAFE, _READ),
    "user_create": RetryRule(
        Retry.KEYED, "creates an end user: sent with the user's key, replayed upstream."
    ),
    "user_update": RetryRule(
        Retry.ONCE,
        "a change of identity fields restarts verification upstream: not repeated behind the "
        "person's back; they see the failure and send it again.",
    ),
    "user_get": RetryRule(Retry.SAFE, _READ),
    "virtual_account_create": RetryRule(
        Retry.ONCE, "no key: a repeat after a lost answer would open a second account."
    ),
    "virtual_account_get": RetryRule(Retry.SAFE, _READ),
    "virtual_account_list": RetryRule(Retry.SAFE, _READ),
    "virtual_account_balance": RetryRule(Retry.SAFE, _READ),
    "recipient_create": RetryRule(
        Retry.ONCE, "no key: a repeat after a lost answer would list the recipient twice."
    ),
    "recipient_get": RetryRule(Retry.SAFE, _READ),
    "recipient_list": RetryRule(Retry.SAFE, _READ),
    "webhook_register": RetryRule(
        Retry.ONCE,
        "a registration with a new secret starts the upstream's rotation window: the webhooks "
        "app decides when to register again, not the transport.",
    ),
}


@dataclass(frozen=True)
class RetryNotice:
    """Told to a caller's `on_retry` before the gateway waits to send an attempt again."""

    operation: str
    failure: UpstreamError
    attempt: int  # the attempt that failed (from 1)
    max_attempts: int
    delay: float  # seconds until the next attempt
    next_try_at: datetime

    @property
    def next_attempt(self) -> int:
        return self.attempt + 1


def rule_for(operation: str, *, method: str) -> RetryRule:
    """The operation's rule; an operation outside the map is a read when it is a GET, otherwise
    a mutation that is retried only with a key (the gateway's rule before this map)."""
    rule = POLICY.get(operation)
    if rule is not None:
        return rule
    if method.upper() == "GET":
        return RetryRule(Retry.SAFE, _READ)
    return RetryRule(Retry.KEYED, "an unlisted mutation: retried only with a key.")


def may_retry(
    *,
    operation: str,
    method: str,
    keyed: bool,
    failure: UpstreamError,
    attempt: int,
    max_attempts: int,
) -> bool:
    """Whether to send attempt `attempt + 1` after `failure` (attempts count from 1)."""
    if attempt >= max_attempts or not failure.retryable:
        return False
    if isinstance(failure, RateLimited):
        return True  # refused before it was handled: nothing can happen twice
    retry = rule_for(operation, method=method).retry
    return retry is Retry.SAFE or (retry is Retry.KEYED and keyed)
