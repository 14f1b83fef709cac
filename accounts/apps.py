"""App configuration for accounts."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from staff.schedules import register_schedule

        # Activation is tracked to `active` even when no webhook arrives (none registered, or
        # dropped): activating accounts are read back every minute (background priority).
        register_schedule(
            "accounts.track_activation",
            "accounts.tasks.virtual_accounts_track_activation",
            minutes=1,
        )
