"""PostgreSQL for the test suite only: Django's own backend, with a flush that deletes.

A test that commits (a live server, a worker, two processes) ends with a flush of every table.
Django flushes PostgreSQL with one TRUNCATE of all of them, which rewrites each table's files:
about 3 s here for two databases of ~70 tables each holding a handful of rows, on every such test,
and the larger part of the suite's time. DELETE of the same few rows takes milliseconds. The
foreign keys Django creates are DEFERRABLE INITIALLY DEFERRED, and Django runs the flush in one
transaction, so the order of the DELETEs does not matter once the constraints are deferred.

Everything else (queries, locks, SKIP LOCKED, the pool) is the real backend: config/settings/test.py
selects this module only when DATABASE_URL points at PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(
        self,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if not tables or reset_sequences:
            # A test that asks for fresh sequences gets Django's TRUNCATE ... RESTART IDENTITY.
            return super().sql_flush(
                style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [
            "SET CONSTRAINTS ALL DEFERRED",
            # Table names come from the models, quoted by the backend.
            *(f"DELETE FROM {self.quote_name(table)}" for table in tables),  # noqa: S608
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
