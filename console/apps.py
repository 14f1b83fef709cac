"""App configuration for console: the back-office shell every other app plugs into."""

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        # Importing schedules registers the console's own heartbeat schedule.
        from console import schedules  # noqa: F401
