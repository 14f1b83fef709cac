"""Writing the receiver's rows fast: one prepared INSERT a row, without a model instance, and
one SQLite write transaction at a time per process (ADR 0024)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from django.db import connection, models


@lru_cache(maxsize=16)
def _insert_statement(model: type[models.Model], vendor: str) -> tuple[str, tuple[Any, ...], bool]:
    """One model's INSERT of every concrete column but the key, built once per process."""
    quote = connection.ops.quote_name
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    returning = connection.features.can_return_columns_from_insert
    # Names from the model's metadata, quoted; every value is a parameter.
    sql = "INSERT INTO {} ({}) VALUES ({}){}".format(  # noqa: S608
        quote(model._meta.db_table),
        ", ".join(quote(str(f.column)) for f in fields),
        ", ".join(["%s"] * len(fields)),
        f" RETURNING {quote(str(model._meta.pk.column))}" if returning else "",
    )
    return sql, fields, returning


def row_insert(model: type[models.Model], values: dict[str, Any]) -> int:
    """
    INSERT one row without building a model instance: the ORM's save() (instance, signals, SQL
    compiled per call) was most of a delivery's CPU. Each value still goes through its field's
    own `get_db_prep_save` (JSON, datetimes, bytes as the backend wants them); a field not given
    takes its default. Only for the receiver's rows, which have no save() logic or signals.
    """
    sql, fields, returning = _insert_statement(model, connection.vendor)
    params = [
        f.get_db_prep_save(
            values[f.attname] if f.attname in values else f.get_default(), connection
        )
        for f in fields
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if returning:
            return int(cursor.fetchone()[0])
        return int(cursor.lastrowid)


_sqlite_writer = threading.Lock()


@contextmanager
def write_turn() -> Iterator[None]:
    """
    On the embedded SQLite, one receiver write transaction at a time per process.

    SQLite admits one writer; a thread that finds the write lock taken sleeps in SQLite's busy
    handler (1, 2, 5, 10, ... 100 ms steps) instead of waking when the lock frees, which is what
    the slowest acknowledgements were made of with 8 concurrent senders. Queuing on a Python lock
    wakes the next sender at once. Other processes (the worker) still meet the busy timeout.
    Not taken inside an outer transaction (which may already hold SQLite's lock) nor on other
    databases, where writers do not exclude each other.
    """
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with _sqlite_writer:
        yield
