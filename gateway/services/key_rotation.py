"""Re-encrypt every stored secret under the newest key of PAYOPS_ENCRYPTION_KEYS: every model each
app declared with staff.crypto.register_encrypted_fields (columns, and secrets inside payloads such
as those of pending admin changes). The gateway's cached upstream tokens are not rotated: a token
no key opens is dropped and fetched again (gateway.tokens)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import models, transaction

from staff import crypto


@dataclass
class RotationCounts:
    """How many rows and values were re-encrypted, per model label; never the values."""

    rows: dict[str, int] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)

    @property
    def total_values(self) -> int:
        return sum(self.values.values())


def secrets_rotate() -> RotationCounts:
    """
    Re-encrypt every non-empty secret column under the newest key, in one transaction: either all
    secrets move to the new key or none do (a value no configured key opens aborts the whole run).
    """
    counts = RotationCounts()
    with transaction.atomic():
        for entry in crypto.encrypted_fields():
            label = entry.model._meta.label
            counts.rows[label] = 0
            counts.values[label] = 0
            rows = entry.model._default_manager.select_for_update().order_by("pk")
            for row in rows.iterator():
                changed, values = _row_rotate(row, entry)
                if changed:
                    # update_fields keeps auto_now columns (updated_at) out of it: no user edit.
                    row.save(update_fields=changed)
                    counts.rows[label] += 1
                    counts.values[label] += values
    return counts


def _row_rotate(row: models.Model, entry: crypto.EncryptedFields) -> tuple[list[str], int]:
    """Re-encrypt one row's secrets in place: the fields changed, and how many secrets."""
    changed: list[str] = []
    values = 0
    for name in entry.columns:
        value = getattr(row, name)
        if value:
            setattr(row, name, crypto.reencrypt(value))
            changed.append(name)
            values += 1
    if entry.rotate_row is not None:
        counted: list[int] = []

        def rotate(ciphertext: str) -> str:
            counted.append(1)
            return crypto.reencrypt(ciphertext)

        changed.extend(entry.rotate_row(row, rotate))
        values += len(counted)
    return changed, values
