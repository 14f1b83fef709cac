"""Re-encrypt every stored secret under the newest key of PAYOPS_ENCRYPTION_KEYS."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.apps import apps
from django.db import models, transaction

from staff import crypto

# A secret column is a text field whose name ends with this suffix (Environment's credentials and
# webhook secrets today); any app that stores a secret the same way is rotated too.
ENCRYPTED_SUFFIX = "_encrypted"


@dataclass
class RotationCounts:
    """How many rows and values were re-encrypted, per model label; never the values."""

    rows: dict[str, int] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)

    @property
    def total_values(self) -> int:
        return sum(self.values.values())


def encrypted_fields() -> dict[type[models.Model], list[str]]:
    """Every model with secret columns, and those columns' names."""
    found: dict[type[models.Model], list[str]] = {}
    for model in apps.get_models():
        names = [
            f.name
            for f in model._meta.get_fields()
            if isinstance(f, models.TextField | models.CharField)
            and f.name.endswith(ENCRYPTED_SUFFIX)
        ]
        if names:
            found[model] = names
    return found


def secrets_rotate() -> RotationCounts:
    """
    Re-encrypt every non-empty secret column under the newest key, in one transaction: either all
    secrets move to the new key or none do (a value no configured key opens aborts the whole run).
    """
    counts = RotationCounts()
    with transaction.atomic():
        for model, names in encrypted_fields().items():
            label = model._meta.label
            counts.rows[label] = 0
            counts.values[label] = 0
            for row in model._default_manager.select_for_update().order_by("pk").iterator():
                changed = []
                for name in names:
                    value = getattr(row, name)
                    if value:
                        setattr(row, name, crypto.reencrypt(value))
                        changed.append(name)
                if changed:
                    # update_fields keeps auto_now columns (updated_at) out of it: no user edit.
                    row.save(update_fields=changed)
                    counts.rows[label] += 1
                    counts.values[label] += len(changed)
    return counts
