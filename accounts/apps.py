"""App configuration for accounts: its schedule and its mirror for webhooks' catch-up."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts.catch_up import virtual_accounts_catch_up
        from console.schedules import register_schedule
        from webhooks.mirrors import Mirror, register_mirror

        # After a webhook registration, accounts still activating are read back.
        register_mirror(
            Mirror(
                "virtual_account",
                "virtual accounts",
                catch_up=virtual_accounts_catch_up,
                order=20,
            )
        )

        # Activation is tracked to `active` even when no webhook arrives (none registered, or
        # dropped): activating accounts are read back every minute (background priority).
        register_schedule(
            "accounts.track_activation",
            "accounts.tasks.virtual_accounts_track_activation",
            minutes=1,
        )
