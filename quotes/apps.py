"""App configuration for quotes."""

from django.apps import AppConfig


class QuotesConfig(AppConfig):
    name = "quotes"
    verbose_name = "Quotes"

    def ready(self) -> None:
        from staff.schedules import register_schedule

        # Expiry housekeeping: a list filtered by status must not show stale ACTIVE quotes.
        register_schedule("quotes.expire_due", "quotes.tasks.expire_due_quotes", minutes=1)
