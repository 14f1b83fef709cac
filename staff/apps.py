"""App configuration for staff: audit signals on sign-in, roles synced after migrate."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = "Staff"

    def ready(self) -> None:
        from staff import signals

        signals.connect()
        post_migrate.connect(signals.on_post_migrate, sender=self, dispatch_uid="staff.roles")
