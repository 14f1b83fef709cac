"""App configuration for staff: audit signals, roles after migrate, the core bootstrap steps."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = "Staff"

    def ready(self) -> None:
        # Importing bootstrap registers the staff steps before any other app adds its own.
        from staff import bootstrap, signals  # noqa: F401

        signals.connect()
        post_migrate.connect(signals.on_post_migrate, sender=self, dispatch_uid="staff.roles")
