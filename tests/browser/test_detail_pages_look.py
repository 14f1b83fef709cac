"""The pages these fixes touched, on a desk (1280 px) and a phone (390 px): nothing overflows, no
CSP violation, each shows the fix. Screenshots land in var/screenshots/ for a person to look at."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from quotes.models import Quote
from staff.crypto import encrypt
from staff.models import StaffUser
from tests.browser.test_look import page_overflow
from tests.finance import make_draft, make_end_user, make_environment, make_virtual_account
from webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.browser

SCREENSHOTS = Path("var/screenshots")
SIZES = {"desk": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def _records(staff: dict[str, StaffUser]) -> dict[str, str]:
    environment = make_environment()
    for user in staff.values():
        environment_switch(user=user, environment=environment)
    end_user = make_end_user(environment, status="verified", verification_status="verified")
    crypto = make_virtual_account(
        environment,
        end_user,
        mode="crypto",
        available_balance=Decimal("0.00"),
        balance_as_of=timezone.now(),
    )
    make_draft(
        maker=staff["finance_maker"],
        environment=environment,
        virtual_account=crypto,
        mode="crypto",
        payment_currency="USDC",
        payment_network="polygon",
    )
    quote = Quote.objects.create(
        environment=environment,
        upstream_id="quo_" + "0123456789abcdef" * 2,
        requested_by=staff["finance_maker"],
        base_currency="USDC",
        quote_currency="COP",
        account_type="PSE",
        network="solana",
        amount_in_destination=True,
        requested_amount=Decimal("2000000.00"),
        base_amount=Decimal("513.45"),
        quote_amount=Decimal("2000000.00"),
        rate=Decimal("3950"),
        service_rate=Decimal("3934.2"),
        base_fixed_fee=Decimal("1.50"),
        base_percentage_fee=Decimal("0.006"),
        base_fx_markup=Decimal("0.004"),
        client_fixed_fee=Decimal("0"),
        client_percentage_fee=Decimal("0"),
        client_fx_markup=Decimal("0"),
        network_fee=Decimal("0.50"),
        penalty_markup=Decimal("0"),
        total_fees=Decimal("5.08"),
        status="ACTIVE",
        expires_at=timezone.now() + timedelta(minutes=10),
    )
    WebhookEndpoint.objects.create(
        environment=environment,
        secret_encrypted=encrypt("whsec_look"),
        secret_set_at=timezone.now(),
    )
    return {
        "quote": f"/quotes/{quote.pk}/",
        "quotes-filtered": "/quotes/?date_from=2026-11-23&date_to=11/30/2026",
        "end-user": f"/end-users/{end_user.pk}/",
        "crypto-account": f"/accounts/virtual-accounts/{crypto.pk}/",
        "health": "/system/health/",
        "rotate-confirm": f"/webhooks/endpoints/{environment.pk}/rotate/",
        "recipient-form": "/accounts/recipients/new/",
    }


# (name, role, what the page must show)
PAGES = [
    ("quote", "finance_maker", "2,000,000.00 COP to arrive"),
    ("quotes-filtered", "finance_approver", "Enter the date as yyyy-mm-dd"),
    ("end-user", "compliance", "Upstream user status"),
    ("crypto-account", "finance_maker", "USDC on polygon (1 payout)"),
    ("health", "admin", "Took"),
    ("rotate-confirm", "admin", "Overlap window"),
    ("recipient-form", "finance_maker", "Account number or IBAN"),
]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("name", "role", "shows"), PAGES, ids=[p[0] for p in PAGES])
def test_the_fixed_pages_fit_and_show_their_fix(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    name: str,
    role: str,
    shows: str,
    size: str,
) -> None:
    paths = _records(demo_staff)
    page.set_viewport_size(SIZES[size])
    sign_in(page, demo_staff[role].email)
    response = page.goto(paths[name])
    assert response is not None and response.status == 200
    expect(page.locator("main, #main").first).to_contain_text(shows)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-{size}.png"), full_page=True)
    assert page_overflow(page) == 0
    assert console_errors == []
