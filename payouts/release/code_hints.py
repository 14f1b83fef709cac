"""Codes offered on the release step: a registry that dev-only apps fill, empty in production.

The payout code arrives by email. Where something can read that email for the approver (the
emulator's mailbox, in development and tests), an app registers a provider from its
`AppConfig.ready()`; payouts never imports it (the `sandbox` app is not installed in production):

    from payouts.release.code_hints import register_code_hint
    register_code_hint("sandbox.mailbox", emulator_mailbox_hint)

A provider takes the payout and returns a `CodeHint`, or None when it has nothing to offer for
it. With nothing registered the step offers nothing. Whatever is registered, a production
environment is never asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from payouts.models import Payout

logger = logging.getLogger("payouts")


@dataclass(frozen=True)
class CodeHint:
    """The latest code a provider read for the payout, or why it could not read one."""

    code: str
    sent_at: datetime | None
    source: str  # where it was read, in words ("the emulator's sandbox mailbox")
    more_url: str = ""  # a page listing every code, when there is one
    problem: str = ""  # set (and `code` empty) when the source did not answer


CodeHintProvider = Callable[[Payout], CodeHint | None]
CODE_HINT_PROVIDERS: dict[str, CodeHintProvider] = {}


def register_code_hint(name: str, provider: CodeHintProvider) -> None:
    """Add (or replace, by name) a provider; call it from an AppConfig.ready()."""
    CODE_HINT_PROVIDERS[name] = provider


def code_hint_for(payout: Payout) -> CodeHint | None:
    """The first hint a provider offers for this payout; never one for a production environment."""
    if payout.environment.is_production:
        return None
    for name, provider in CODE_HINT_PROVIDERS.items():
        try:
            hint = provider(payout)
        except Exception:  # a dev-only helper must never break the payout page
            logger.exception("code hint provider %s failed for payout %s", name, payout.pk)
            continue
        if hint is not None:
            return hint
    return None
