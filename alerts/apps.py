"""App configuration for alerts: its conditions and its schedules."""

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from alerts import tasks
        from alerts.conditions import (
            approvals_waiting,
            budget_low,
            payout_failed,
            payout_quiet,
            payout_submitting,
            reconciliation_open,
            sign_in_failures,
            webhook_drift,
            webhook_receiver,
            webhook_silence,
        )
        from console.schedules import register_schedule

        for module in (
            payout_submitting,
            payout_quiet,
            payout_failed,
            approvals_waiting,
            webhook_silence,
            webhook_drift,
            webhook_receiver,
            budget_low,
            reconciliation_open,
            sign_in_failures,
        ):
            module.register()
        register_schedule("alerts.evaluate", tasks.alerts_evaluate_all, minutes=1)
        register_schedule("alerts.deliveries_retry", tasks.alert_deliveries_retry, minutes=1)
        register_schedule("alerts.digest", tasks.alert_digest_daily, every="daily")
