"""The apps that mirror upstream records tell webhooks how to catch up on them and what is open.

Events keep the mirrors (end users, virtual accounts, payouts) current; when no receiver was
registered, or it pointed elsewhere, what happened upstream meanwhile never arrived and the
upstream offers no replay (decisions.md 4). So, after a registration commits, webhooks asks each
mirroring app to re-read its open records and apply what changed (`webhooks.services.catch_up`).

Webhooks never imports those apps: each one registers itself from its AppConfig.ready(),

    from webhooks.mirrors import Mirror, register_mirror
    register_mirror(Mirror("payout", "payouts", catch_up=payouts_catch_up, open_ids=...))

and the catch-up functions share `catch_up_each`, which stops when the gateway's background
budget is spent (the gateway's background priority is what keeps this from eating staff calls).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.errors import BudgetExhausted, UpstreamError
from gateway.models import Environment
from staff.errors import ServiceError

BUDGET_SPENT = "background budget spent: the rest waits for polling or the next catch-up"


@dataclass(frozen=True)
class CatchUpResult:
    """What one kind's catch-up did: records re-read, changed, failed, and why it stopped early."""

    checked: int = 0
    changed: int = 0
    failed: int = 0
    stopped: str = ""


class CatchUp(Protocol):
    def __call__(self, *, environment: Environment, limit: int) -> CatchUpResult: ...


@dataclass(frozen=True)
class Mirror:
    """
    One kind of mirrored record. `kind` is the event links' word ("user", "virtual_account",
    "payout"); `catch_up` re-reads at most `limit` of the environment's records that are not
    final, through the app's own refresh/apply services, in the background priority.
    `open_ids`, when given, names the records the upstream still owes news about (silence is
    judged against them). Lower `order` runs first (money first).
    """

    kind: str
    label: str
    catch_up: CatchUp
    open_ids: Callable[[Environment], Collection[str]] | None = None
    order: int = 100


MIRRORS: dict[str, Mirror] = {}


def register_mirror(mirror: Mirror) -> None:
    """Add (or replace, by kind) a mirrored kind; call it from an AppConfig.ready()."""
    MIRRORS[mirror.kind] = mirror


def mirrors() -> list[Mirror]:
    return sorted(MIRRORS.values(), key=lambda mirror: (mirror.order, mirror.kind))


def _budget_spent(exc: BaseException) -> bool:
    return isinstance(exc, BudgetExhausted) or isinstance(exc.__cause__, BudgetExhausted)


def catch_up_each[T](records: Iterable[T], refresh: Callable[[T], Any]) -> CatchUpResult:
    """
    Re-read each record with `refresh` (truthy when the record changed). A record the upstream
    refuses or does not answer for is counted failed and the next one is tried; the gateway's
    background budget running out stops the whole kind (every next call would be refused too).
    """
    checked = changed = failed = 0
    for record in records:
        checked += 1
        try:
            changed += 1 if refresh(record) else 0
        except (ServiceError, UpstreamError) as exc:
            if _budget_spent(exc):
                return CatchUpResult(checked - 1, changed, failed, BUDGET_SPENT)
            failed += 1
    return CatchUpResult(checked, changed, failed)
