"""The emulator's own database: its tables live under the `emulator` alias, nothing else does."""

from __future__ import annotations

from typing import Any

from django.db import models

# The DATABASES alias (config.settings.emulator_guest.EMULATOR_DATABASE_ALIAS); every transaction
# of the emulator names it, because transaction.atomic() alone wraps the default database.
EMULATOR_DB = "emulator"
APP_LABEL = "emulator"


class EmulatorRouter:
    """Reads, writes and migrations of the emulator's models go to its alias, and only there."""

    def db_for_read(self, model: type[models.Model], **hints: Any) -> str | None:
        return EMULATOR_DB if model._meta.app_label == APP_LABEL else None

    def db_for_write(self, model: type[models.Model], **hints: Any) -> str | None:
        return EMULATOR_DB if model._meta.app_label == APP_LABEL else None

    def allow_relation(self, obj1: models.Model, obj2: models.Model, **hints: Any) -> bool | None:
        inside = {obj._meta.app_label == APP_LABEL for obj in (obj1, obj2)}
        return None if inside == {False} else inside == {True}

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        # The emulator's database holds its tables alone; the back office's stay out of it.
        return (app_label == APP_LABEL) == (db == EMULATOR_DB)
