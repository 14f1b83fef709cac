"""App configuration for payouts."""

from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"
    verbose_name = "Payouts"

    def ready(self) -> None:
        from console.schedules import register_schedule

        # Expiry housekeeping of the 15-minute quotes reserved by a payout preview.
        register_schedule(
            "payouts.expire_reservations", "payouts.tasks.expire_due_reservations", minutes=1
        )
