"""App configuration for gateway."""

from django.apps import AppConfig


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = "Upstream gateway"

    def ready(self) -> None:
        from gateway.views import quota_panel_context
        from staff.dashboard import DashboardPanel, register_panel
        from staff.roles import ENVIRONMENTS_MANAGE

        register_panel(
            DashboardPanel(
                "gateway.quota",
                "gateway/includes/quota_gauge.html",
                permission=ENVIRONMENTS_MANAGE,
                context=quota_panel_context,
            )
        )

        from django.conf import settings

        from staff.schedules import register_schedule

        # Renew tokens ahead of expiry so staff calls never wait on /auth.
        register_schedule(
            "gateway.refresh_tokens",
            "gateway.tasks.refresh_upstream_tokens",
            minutes=max(1, settings.GATEWAY_TOKEN_REFRESH_EVERY // 60),
        )
