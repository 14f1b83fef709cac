"""Where the limiter's state lives: Redis (WATCH/MULTI) or a locked database row."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Protocol, TypeVar

from django.conf import settings
from django.db import transaction

from gateway.limiter.policy import LimiterState

T = TypeVar("T")


class StateStore(Protocol):
    def update(self, environment_id: int, change: Callable[[LimiterState], T]) -> T:
        """Apply `change` to the environment's state atomically across processes."""
        ...

    def read(self, environment_ids: list[int]) -> dict[int, LimiterState]:
        """The states of these environments (absent: a fresh state), without locking."""
        ...


class DatabaseStore:
    """
    A row per environment. On PostgreSQL `select_for_update` serialises the processes; on SQLite
    the project's IMMEDIATE transaction mode takes the write lock when the transaction begins,
    which serialises them the same way.
    """

    def update(self, environment_id: int, change: Callable[[LimiterState], T]) -> T:
        from gateway.models import LimiterRow

        with transaction.atomic():
            row, _ = LimiterRow.objects.select_for_update().get_or_create(
                environment_id=environment_id
            )
            state = LimiterState.from_dict(row.state)
            result = change(state)
            row.state = state.to_dict()
            row.save(update_fields=["state"])
        return result

    def read(self, environment_ids: list[int]) -> dict[int, LimiterState]:
        from gateway.models import LimiterRow

        rows = dict(
            LimiterRow.objects.filter(environment_id__in=environment_ids).values_list(
                "environment_id", "state"
            )
        )
        return {pk: LimiterState.from_dict(rows.get(pk)) for pk in environment_ids}


class RedisStore:
    """One key per environment, changed under WATCH: concurrent writers retry, never interleave."""

    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url)

    @staticmethod
    def key(environment_id: int) -> str:
        prefix = getattr(settings, "PAYOPS_CACHE_PREFIX", "payops")
        return f"{prefix}:gateway:limiter:{environment_id}"

    def update(self, environment_id: int, change: Callable[[LimiterState], T]) -> T:
        import redis

        key = self.key(environment_id)
        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    state = LimiterState.from_dict(json.loads(raw) if raw else None)
                    result = change(state)
                    pipe.multi()
                    # Kept two weeks so the weekly count survives; rewritten on every call.
                    pipe.set(key, json.dumps(state.to_dict()), ex=14 * 86400)
                    pipe.execute()
                    return result
                except redis.WatchError:
                    continue

    def read(self, environment_ids: list[int]) -> dict[int, LimiterState]:
        if not environment_ids:
            return {}
        raws = self.client.mget([self.key(pk) for pk in environment_ids])
        return {
            pk: LimiterState.from_dict(json.loads(raw) if raw else None)
            for pk, raw in zip(environment_ids, raws, strict=True)
        }


@cache
def _store(redis_url: str) -> StateStore:
    return RedisStore(redis_url) if redis_url else DatabaseStore()


def store() -> StateStore:
    return _store(settings.REDIS_URL or "")
