"""App configuration for alerts: its conditions, its rule changes (admin changes), its schedules,
its dashboard panel and its live message."""

from typing import Any

from django.apps import AppConfig
from django.http import HttpRequest


def dashboard_context(request: HttpRequest) -> dict[str, Any]:
    from alerts.selectors import open_alerts
    from staff.models import StaffUser

    assert isinstance(request.user, StaffUser)
    return {"open": open_alerts(user=request.user)}


def _condition_registrations() -> None:
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


def _staff_registrations() -> None:
    from alerts.audit_actions import AUDIT_ACTION_LABELS
    from alerts.live import alert_changed
    from alerts.models import Alert, AlertRule
    from alerts.rule_changes import register_alert_change_kinds
    from staff.actions import register_announcer
    from staff.audit_actions import register_audit_actions
    from staff.crypto import register_encrypted_fields

    # What people read for this app's audit actions (the audit pages).
    register_audit_actions(AUDIT_ACTION_LABELS)
    # Rule changes are admin changes (staff.changes): another admin approves them.
    register_alert_change_kinds()
    register_encrypted_fields(AlertRule, "webhook_url_encrypted")
    # An alert fired, acknowledged or resolved tells the open alert pages (alerts.live).
    register_announcer(Alert, alert_changed)


def _console_registrations() -> None:
    from alerts import tasks
    from alerts.bootstrap import default_rules_create
    from console.bootstrap import register_step
    from console.dashboard import DashboardPanel, register_panel
    from console.schedules import register_schedule
    from staff.roles import ALERTS_VIEW

    register_step("alerts.default_rules", default_rules_create)
    register_schedule("alerts.evaluate", tasks.alerts_evaluate_all, minutes=1)
    register_schedule("alerts.deliveries_retry", tasks.alert_deliveries_retry, minutes=1)
    register_schedule("alerts.digest", tasks.alert_digest_daily, every="daily")
    register_panel(
        DashboardPanel(
            "alerts.open",
            "alerts/includes/dashboard_panel.html",
            permission=ALERTS_VIEW,
            context=dashboard_context,
            order=10,  # what is wrong now comes first
        )
    )


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        _condition_registrations()
        _staff_registrations()
        _console_registrations()
