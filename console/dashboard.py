"""Dashboard panels other apps add (e.g. the gateway's quota gauge), shown by permission.

From an AppConfig.ready():

    from console.dashboard import DashboardPanel, register_panel
    register_panel(DashboardPanel("gateway.quota", "gateway/includes/quota_gauge.html",
                                  permission="staff.manage_environments", context=quota_context))

The template is included with the page context plus `panel` (the DashboardPanel) and
`panel_context` (what `context(request)` returned, or an empty dict). Panels show by `order`
(lowest first; what needs someone now before what informs), then by registration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest


@dataclass(frozen=True)
class DashboardPanel:
    name: str
    template: str
    permission: str | None = None
    context: Callable[[HttpRequest], dict[str, Any]] | None = None
    order: int = 100


@dataclass(frozen=True)
class RenderedPanel:
    panel: DashboardPanel
    context: dict[str, Any]


DASHBOARD_PANELS: list[DashboardPanel] = []


def register_panel(panel: DashboardPanel) -> None:
    """Add (or replace, by name) a panel."""
    for index, existing in enumerate(DASHBOARD_PANELS):
        if existing.name == panel.name:
            DASHBOARD_PANELS[index] = panel
            return
    DASHBOARD_PANELS.append(panel)


def panels_for(request: HttpRequest) -> list[RenderedPanel]:
    user = request.user
    return [
        RenderedPanel(panel, panel.context(request) if panel.context else {})
        for panel in sorted(DASHBOARD_PANELS, key=lambda panel: panel.order)
        if panel.permission is None or user.has_perm(panel.permission)
    ]
