"""The audit trail's hash chain: how an entry is hashed, how the next link is taken, how the
chain is verified (ADR 0019).

Each entry has a `seq` (1, 2, 3... no gap), `prev_hash` (the previous entry's `entry_hash`; 64
zeros for the first) and `entry_hash`, SHA-256 over `canonical(entry)`: its fields as sorted,
compact JSON. Changing any field of a row (a raw UPDATE), deleting a row or inserting one out
of band breaks the chain at that row, and `chain_verify` names the first broken link.

Writers take the next link under a lock (`chain_lock`): on PostgreSQL a transaction-scoped
advisory lock, held until the writer's transaction commits, so two transactions never read the
same head; SQLite serialises writers already (transactions BEGIN IMMEDIATE, config/settings).
`seq` is unique too: a writer that somehow skipped the lock fails rather than forks the chain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.db import connection

from staff.models import AuditEntry

GENESIS_HASH = "0" * 64
# pg_advisory_xact_lock's key: any constant that no other lock of ours uses ("audit" in ASCII).
CHAIN_LOCK_KEY = 0x6175646974
HASHED_FIELDS = (
    "seq",
    "at",
    "actor_id",
    "action",
    "target_type",
    "target_id",
    "details",
    "before",
    "after",
    "prev_hash",
)


def _normal(value: Any) -> Any:
    """JSON values as the database hands them back: a float that is a whole number may come back
    as an int (PostgreSQL's jsonb keeps numbers as numeric), so both hash the same."""
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _instant(at: Any) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical(fields: dict[str, Any]) -> bytes:
    """The bytes an entry's hash covers: HASHED_FIELDS as sorted, compact UTF-8 JSON."""
    data = {name: fields.get(name) for name in HASHED_FIELDS}
    data["at"] = _instant(data["at"])
    for name in ("details", "before", "after"):
        data[name] = _normal(data[name])
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash_of(fields: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(fields)).hexdigest()


def fields_of(entry: AuditEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in HASHED_FIELDS}


def chain_lock() -> None:
    """Serialise chaining until the caller's transaction ends (call it inside one)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK_KEY])


def chain_head() -> tuple[int, str]:
    """(seq, entry_hash) of the last entry, (0, GENESIS_HASH) when there is none. Under the lock."""
    last = AuditEntry.objects.order_by("-seq").values_list("seq", "entry_hash").first()
    return last if last is not None else (0, GENESIS_HASH)


@dataclass(frozen=True)
class ChainBreak:
    """The first broken link: which entry, and what differs."""

    entry_id: int | None
    seq: int
    problem: str

    def __str__(self) -> str:
        where = f"entry {self.entry_id} (seq {self.seq})" if self.entry_id else f"seq {self.seq}"
        return f"{where}: {self.problem}"


@dataclass(frozen=True)
class ChainReport:
    checked: int
    head_seq: int
    head_hash: str
    broken: ChainBreak | None

    @property
    def ok(self) -> bool:
        return self.broken is None


def _rows() -> Iterator[AuditEntry]:
    fields = ("id", "entry_hash", *HASHED_FIELDS)
    return AuditEntry.objects.order_by("seq").only(*fields).iterator(chunk_size=2000)


def chain_verify() -> ChainReport:
    """Walk the whole chain in `seq` order (memory flat) and stop at the first broken link.

    A row whose contents were edited no longer matches its `entry_hash`; a row whose hash was
    recomputed too no longer matches the next row's `prev_hash`; a deleted row leaves a gap in
    `seq` and a `prev_hash` nothing has. Deleting the newest rows leaves no trace inside the
    chain: compare `head_seq`/`head_hash` with a copy kept elsewhere (ADR 0019)."""
    expected_seq, expected_prev = 1, GENESIS_HASH
    checked = 0
    for entry in _rows():
        if entry.seq != expected_seq:
            missing = (
                f"seq {expected_seq}"
                if entry.seq == expected_seq + 1
                else f"seq {expected_seq} to {entry.seq - 1}"
            )
            problem = f"the entry before it is missing ({missing}: deleted?)"
            if entry.seq < expected_seq:
                problem = f"its seq repeats or goes back (expected {expected_seq})"
            return ChainReport(
                checked, expected_seq - 1, expected_prev, ChainBreak(entry.pk, entry.seq, problem)
            )
        if entry.prev_hash != expected_prev:
            return ChainReport(
                checked,
                expected_seq - 1,
                expected_prev,
                ChainBreak(
                    entry.pk,
                    entry.seq,
                    "its prev_hash does not match the previous entry's hash "
                    "(the previous entry was rewritten, hash included)",
                ),
            )
        actual = entry_hash_of(fields_of(entry))
        if actual != entry.entry_hash:
            return ChainReport(
                checked,
                expected_seq - 1,
                expected_prev,
                ChainBreak(
                    entry.pk,
                    entry.seq,
                    "its contents changed after it was recorded "
                    "(the hash of its fields no longer matches entry_hash)",
                ),
            )
        checked += 1
        expected_seq, expected_prev = entry.seq + 1, entry.entry_hash
    return ChainReport(checked, expected_seq - 1, expected_prev, None)
