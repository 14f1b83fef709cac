"""The page shell's slots: environment badge, dashboard panels from other apps, messages."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from django.template.loader import render_to_string
from django.test import Client

from console import dashboard
from console.dashboard import DashboardPanel, register_panel

pytestmark = pytest.mark.django_db


def test_env_badge_renders_nothing_without_an_environment() -> None:
    assert render_to_string("includes/env_badge.html", {}).strip() == ""


def test_env_badge_marks_production_with_the_warning_class() -> None:
    production = SimpleNamespace(name="Live", is_production=True)
    sandbox = SimpleNamespace(name="Emulator sandbox", is_production=False)
    html = render_to_string("includes/env_badge.html", {"current_environment": production})
    assert "env-production" in html and "Live" in html and "PRODUCTION" in html
    html = render_to_string("includes/env_badge.html", {"current_environment": sandbox})
    assert "env-sandbox" in html and "Emulator sandbox" in html
    assert "env-production" not in html


def test_production_css_rule_exists() -> None:
    css = (Path(__file__).resolve().parents[2] / "static" / "css" / "payops.css").read_text()
    assert ".env-production" in css
    assert ".badge-ok" in css and ".badge-error" in css and ".badge-warning" in css


@pytest.fixture
def panel_template(settings, tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "tests_panel.html").write_text(
        '<p data-testid="test-panel">{{ panel.name }} says {{ panel_context.word }}</p>'
    )
    settings.TEMPLATES = [
        {**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], tmp_path]}
    ]
    saved = list(dashboard.DASHBOARD_PANELS)
    yield "tests_panel.html"
    dashboard.DASHBOARD_PANELS[:] = saved


def test_dashboard_panels_show_by_permission(client_for, panel_template: str) -> None:  # type: ignore[no-untyped-def]
    register_panel(
        DashboardPanel(
            "tests.gauge",
            panel_template,
            permission="staff.manage_environments",
            context=lambda request: {"word": f"hello {request.user.email}"},
        )
    )
    admin_html = client_for("admin").get("/").content.decode()
    assert "tests.gauge says hello admin@payops.local" in admin_html
    maker_html = client_for("finance_maker").get("/").content.decode()
    assert 'data-testid="test-panel"' not in maker_html


def test_messages_are_shown_once(client_for) -> None:  # type: ignore[no-untyped-def]
    client: Client = client_for("finance_maker")
    client.post(
        "/password/",
        {
            "old_password": "payops-demo",
            "new_password1": "correct-horse-battery-42",
            "new_password2": "correct-horse-battery-42",
        },
    )
    first = client.get("/").content.decode()
    assert 'class="message message-success"' in first
    assert "message-success" not in client.get("/").content.decode()
