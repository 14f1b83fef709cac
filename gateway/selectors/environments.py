"""The environments: the active ones, each person's current one, those in use, and what the
upstream taught the limiter about each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django.db.models import QuerySet

from gateway.models import Environment, EnvironmentKind, StaffEnvironmentChoice
from staff.roles import ENVIRONMENTS_MANAGE

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser


def environment_list() -> QuerySet[Environment]:
    return Environment.objects.order_by("-is_active", "kind", "name")


def environment_active_list() -> QuerySet[Environment]:
    return Environment.objects.filter(is_active=True).order_by("kind", "name")


def environment_choices(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Environment]:
    """
    The environments `user` is offered to work in: the verified active ones; an admin (who can
    test connections) also sees the unverified ones, marked, so they know what to test.
    """
    environments = environment_active_list()
    if user.has_perm(ENVIRONMENTS_MANAGE):  # type: ignore[union-attr]
        return environments
    return environments.filter(verified_at__isnull=False)


def environment_default() -> Environment | None:
    """Where a staff member works until they choose: the first active sandbox (oldest first)."""
    return (
        Environment.objects.filter(is_active=True, kind=EnvironmentKind.SANDBOX)
        .order_by("created_at", "pk")
        .first()
    )


def environment_current(*, user: AbstractBaseUser | AnonymousUser) -> Environment | None:
    """The environment `user` chose, if still active; else the default."""
    if user.is_authenticated:
        choice = (
            StaffEnvironmentChoice.objects.select_related("environment")
            .filter(user_id=user.pk, environment__is_active=True)
            .first()
        )
        if choice is not None:
            return choice.environment
    return environment_default()


def environment_in_use_list() -> list[Environment]:
    """The environments staff work in now: every active one a staff member chose, and the default.

    Ordered by name; each appears once. Readiness probes these and only these.
    """
    chosen = Environment.objects.filter(
        is_active=True,
        pk__in=StaffEnvironmentChoice.objects.values("environment_id"),
    )
    in_use = {environment.pk: environment for environment in chosen}
    default = environment_default()
    if default is not None:
        in_use.setdefault(default.pk, default)
    return sorted(in_use.values(), key=lambda environment: environment.name)


# What the upstream taught the limiter, per environment.


@dataclass(frozen=True)
class UpstreamLimits:
    """
    What the upstream's own answers told the shared limiter about one environment, and the limits
    the gateway therefore keeps (`effective_*`: the configured ones, lowered, never raised).
    """

    rate_per_second: int | None  # RateLimit-Limit over the 1-second window (None: not heard yet)
    rate_heard_at: datetime | None
    max_concurrent: int | None  # inferred from a concurrency refusal, while it holds
    max_concurrent_until: datetime | None
    quota_limit: int | None  # RateLimit-Limit over the week, when the upstream sent it
    quota_remaining: int | None
    quota_spent_until: datetime | None  # the upstream said its weekly quota is spent
    effective_rate: int
    effective_concurrent: int

    @property
    def lowered(self) -> bool:
        return self.effective_rate_lowered or self.effective_concurrent_lowered

    effective_rate_lowered: bool = False
    effective_concurrent_lowered: bool = False


@dataclass(frozen=True)
class EnvironmentRow:
    environment: Environment
    upstream: UpstreamLimits


def _stamp(seconds: float) -> datetime | None:
    return datetime.fromtimestamp(seconds, UTC) if seconds > 0 else None


def environment_rows(*, now: float | None = None) -> list[EnvironmentRow]:
    """Every environment with what its upstream taught the limiter: one query, one store read."""
    from gateway import limiter
    from gateway.target import limits_of

    environments = list(environment_list())
    states = limiter.states([e.pk for e in environments])
    moment = now if now is not None else datetime.now(UTC).timestamp()
    rows = []
    for environment in environments:
        state = states[environment.pk]
        effective = limiter.effective(limits_of(environment), state, now=moment)
        concurrent_holds = state.learned_concurrent > 0 and state.learned_concurrent_until > moment
        rate, concurrent = effective.rate_per_second, effective.max_concurrent
        upstream = UpstreamLimits(
            rate_per_second=state.learned_rate or None,
            rate_heard_at=_stamp(state.learned_rate_at),
            max_concurrent=state.learned_concurrent if concurrent_holds else None,
            max_concurrent_until=_stamp(state.learned_concurrent_until)
            if concurrent_holds
            else None,
            quota_limit=state.quota_limit or None,
            quota_remaining=state.quota_remaining if state.quota_remaining >= 0 else None,
            quota_spent_until=_stamp(state.quota_until) if state.quota_until > moment else None,
            effective_rate=rate,
            effective_concurrent=concurrent,
            effective_rate_lowered=rate < environment.rate_per_second,
            effective_concurrent_lowered=concurrent < environment.max_concurrent,
        )
        rows.append(EnvironmentRow(environment, upstream))
    return rows
