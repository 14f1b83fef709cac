"""manage.py gateway_rotate_key: re-encrypt every stored secret under the newest key."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from gateway.services.key_rotation import secrets_rotate
from staff.crypto import SecretDecryptionError


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret under the first (newest) key of PAYOPS_ENCRYPTION_KEYS, "
        "in one transaction. Run it after putting a new key first; remove the old key only after."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            counts = secrets_rotate()
        except SecretDecryptionError as exc:
            raise CommandError(
                f"{exc} Nothing was changed: put the old key back in PAYOPS_ENCRYPTION_KEYS "
                "(after the new one) and run this command again."
            ) from exc
        for label, rows in counts.rows.items():
            self.stdout.write(f"{label}: {rows} rows, {counts.values[label]} secrets re-encrypted")
        self.stdout.write(
            self.style.SUCCESS(f"Re-encrypted {counts.total_values} secrets under the newest key.")
        )
