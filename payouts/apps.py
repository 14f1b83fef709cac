"""App configuration for payouts."""

from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    name = "payouts"
    verbose_name = "Payouts"

    def ready(self) -> None:
        from console.dashboard import DashboardPanel, register_panel
        from console.schedules import register_schedule
        from payouts.approval_views import dashboard_panel_context
        from staff.roles import FINANCE_VIEW

        # Waiting for me, my drafts returned, failures and returns (also sent by email).
        register_panel(
            DashboardPanel(
                "payouts.notifications",
                "payouts/includes/dashboard_panel.html",
                permission=FINANCE_VIEW,
                context=dashboard_panel_context,
            )
        )

        # Expiry housekeeping of the 15-minute quotes reserved by a payout preview.
        register_schedule(
            "payouts.expire_reservations", "payouts.tasks.expire_due_reservations", minutes=1
        )
        # Exactly-once recovery: a payout stuck in `submitting` is re-sent with its own key.
        register_schedule(
            "payouts.recover_submitting", "payouts.tasks.recover_submitting", minutes=1
        )
        # Webhooks first; polling is the safety net (background budget).
        register_schedule("payouts.poll", "payouts.tasks.poll_payouts", minutes=5)
