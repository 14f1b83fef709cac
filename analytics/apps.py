"""App configuration for the finance analytics: its dashboard panel."""

from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"
    verbose_name = "Analytics"

    def ready(self) -> None:
        from console.dashboard import DashboardPanel, register_panel
        from staff.roles import BOOKS_VIEW

        register_panel(
            DashboardPanel("analytics.link", "analytics/panel.html", permission=BOOKS_VIEW)
        )
