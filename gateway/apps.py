"""App configuration for gateway: what it adds to the console (checks, panels, schedules, steps)."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = gettext_lazy("Upstream gateway")

    def ready(self) -> None:
        from gateway.audit_actions import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from django.conf import settings

        from console.dashboard import DashboardPanel, register_panel
        from console.health import register_check
        from console.metrics import register_metrics
        from console.schedules import register_schedule
        from gateway.health import upstream_check
        from gateway.models import Environment
        from gateway.selectors import budget_metrics
        from gateway.services.environment_changes import register_environment_change_kinds
        from gateway.tasks import refresh_upstream_tokens
        from gateway.views import quota_panel_context
        from staff.crypto import register_encrypted_fields
        from staff.roles import ENVIRONMENTS_MANAGE

        # Credentials, base URL and verification email changes are admin changes (staff.changes).
        register_environment_change_kinds()
        register_encrypted_fields(
            Environment,
            "client_id_encrypted",
            "password_encrypted",
            "api_key_encrypted",
            "webhook_secret_encrypted",
            "previous_webhook_secret_encrypted",
        )
        register_panel(
            DashboardPanel(
                "gateway.quota",
                "gateway/includes/quota_gauge.html",
                permission=ENVIRONMENTS_MANAGE,
                context=quota_panel_context,
            )
        )
        # Its own httpx timeout bounds each probe; the console's limit must not cut it shorter.
        register_check(
            "upstream",
            upstream_check,
            timeout=float(settings.GATEWAY_HEALTH_TIMEOUT) + 1.0,
            label=gettext_lazy("Upstream reachable"),
        )
        # Renew tokens ahead of expiry so staff calls never wait on /auth.
        register_metrics("gateway.budget", budget_metrics)
        register_schedule(
            "gateway.refresh_tokens",
            refresh_upstream_tokens,
            minutes=max(1, settings.GATEWAY_TOKEN_REFRESH_EVERY // 60),
        )
