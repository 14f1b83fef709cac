"""`manage.py sync_schedules`: make django-q2's schedules match the ones declared in code."""

from typing import Any

from django.core.management.base import BaseCommand

from console.schedules import schedules_sync


class Command(BaseCommand):
    help = "Create or update each declared schedule and delete owned ones no longer declared."

    def handle(self, *args: Any, **options: Any) -> None:
        result = schedules_sync()
        for label, names in (
            ("created", result.created),
            ("updated", result.updated),
            ("unchanged", result.unchanged),
            ("deleted", result.deleted),
        ):
            for name in names:
                self.stdout.write(f"{label:9} {name}")
        self.stdout.write(
            self.style.SUCCESS(
                f"Schedules in sync: {len(result.created)} created, {len(result.updated)} updated, "
                f"{len(result.unchanged)} unchanged, {len(result.deleted)} deleted."
            )
        )
