"""The main pages in Spanish and Brazilian Portuguese, in Chromium: people whose language is es
or pt-br sign in (the sign-in page follows the browser's language) and each page has its html
lang, a translated heading and no sideways overflow. Screenshots land in
var/screenshots/<lang>/<page>.png for a person to look at (longer words, narrow columns)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from playwright.sync_api import Browser, Page, expect

from gateway.services.environments import environment_switch
from staff.bootstrap import DEMO_PASSWORD
from staff.models import StaffUser
from tests.browser.conftest import authenticator_code
from tests.finance import make_draft, make_environment

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
# Page: (URL name, its heading in es, in pt-br). `payout` takes the draft's id.
PAGES = {
    "dashboard": ("console:dashboard", "Panel", "Painel"),
    "payouts": ("payouts:list", "Pagos", "Pagamentos"),
    "payout": ("payouts:detail", "Pago n.º {pk}", "Pagamento nº {pk}"),
    "approvals": ("payouts:approvals", "Aprobaciones", "Aprovações"),
    "quotes": ("quotes:list", "Cotizaciones", "Cotações"),
    "end-users": ("users:list", "Usuarios finales", "Usuários finais"),
    "accounts": ("accounts:list", "Cuentas virtuales", "Contas virtuais"),
    "recipients": ("accounts:recipient_list", "Destinatarios", "Destinatários"),
    "statements": ("books:statements", "Estados de cuenta", "Extratos"),
    "reconciliation": ("books:reconciliation", "Conciliación", "Conciliação"),
    "audit": ("console:audit", "Registro de auditoría", "Trilha de auditoria"),
    "environments": ("gateway:environments", "Entornos", "Ambientes"),
    "profile": ("profile:profile", "Su perfil", "Seu perfil"),
}


def page_overflow(page: Page) -> int:
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


@pytest.mark.parametrize(("language", "column"), [("es", 1), ("pt-br", 2)])
def test_the_main_pages_speak_the_persons_language(
    language: str,
    column: int,
    browser: Browser,
    live_server,  # type: ignore[no-untyped-def]
    demo_staff: dict[str, StaffUser],
) -> None:
    admin = demo_staff["admin"]
    admin.language = language
    admin.save(update_fields=["language"])
    environment = make_environment()
    environment_switch(user=admin, environment=environment)
    payout = make_draft(maker=demo_staff["finance_maker"], environment=environment)
    # The browser asks for the same language, so the sign-in page is in it too.
    accept = "es-419" if language == "es" else "pt-BR"
    context = browser.new_context(
        base_url=live_server.url, locale=accept, viewport={"width": 1280, "height": 900}
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto(reverse("staff:login"))
        expect(page.locator("html")).to_have_attribute("lang", language)
        expect(page.locator("h1")).to_have_text("Iniciar sesión" if language == "es" else "Entrar")
        sign_in_by_field_names(page, admin.email)
        expect(page.locator("h1")).to_have_text("Panel" if language == "es" else "Painel")
        folder = SCREENSHOTS / language
        folder.mkdir(parents=True, exist_ok=True)
        for key, (name, *headings) in PAGES.items():
            url = reverse(name, args=[payout.pk]) if key == "payout" else reverse(name)
            page.goto(url)
            expect(page.locator("html")).to_have_attribute("lang", language)
            expect(page.locator("h1").first).to_have_text(headings[column - 1].format(pk=payout.pk))
            page.screenshot(path=str(folder / f"{key}.png"), full_page=True)
            assert page_overflow(page) == 0, f"{key} overflows sideways in {language}"
    finally:
        context.close()


def sign_in_by_field_names(page: Page, email: str) -> None:
    """conftest's sign_in finds English labels; here the pages speak another language, so the
    fields are found by name and the buttons by their place."""
    page.locator("input[name=username]").fill(email)
    page.locator("input[name=password]").fill(DEMO_PASSWORD)
    page.locator("main form button[type=submit]").first.click()
    page.wait_for_load_state()
    if "/login/second-factor/" in page.url:
        page.locator("input[name=code]").fill(authenticator_code(email))
        page.get_by_test_id("verify").click()
        page.wait_for_load_state()
