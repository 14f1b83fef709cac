"""The directory and quote pages on a phone (390 px): nothing overflows the page, under the CSP.

Each page is visited as a role that uses it, with deliberately long names, emails and amounts; the
`page` fixture fails the test on any Content-Security-Policy violation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from accounts.models import Recipient, VirtualAccount
from gateway.models import Environment
from gateway.services.environments import environment_switch
from quotes.models import Quote
from staff.models import StaffUser
from tests.finance import make_end_user, make_environment, make_recipient, make_virtual_account
from users.models import EndUser, EndUserTimelineEntry

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


@dataclass
class Records:
    environment: Environment
    end_user: EndUser
    account: VirtualAccount
    recipient: Recipient
    quote: Quote


def directory_and_quotes(staff: dict[str, StaffUser]) -> Records:
    """One of each record, with the longest values a page is likely to meet."""
    environment = make_environment("A sandbox with a rather long name for a narrow screen")
    for user in staff.values():
        environment_switch(user=user, environment=environment)
    end_user = make_end_user(
        environment,
        first_name="Maximiliana Guadalupe",
        last_name="Fernández de la Concepción",
        email="maximiliana.fernandez.de.la.concepcion@a-long-company-domain.example.test",
    )
    EndUserTimelineEntry.objects.create(
        end_user=end_user,
        kind="event",
        summary="Identity verification passed at the upstream's reviewer",
        event_id="evt_" + "0123456789abcdef" * 3,
    )
    account = make_virtual_account(
        environment,
        end_user,
        available_balance=Decimal("123456789.50"),
        balance_as_of=timezone.now(),
    )
    recipient = make_recipient(
        environment,
        end_user,
        created_by=staff["finance_maker"],
        first_name="Bartolomé Esteban",
        last_name="Murillo y Sotomayor de Alcántara",
        bank_name="Banco Internacional de Comercio y Desarrollo Regional S.A.",
    )
    now = timezone.now()
    quote = Quote.objects.create(
        environment=environment,
        upstream_id="quo_" + "0123456789abcdef" * 2,
        requested_by=staff["finance_maker"],
        base_currency="USD",
        quote_currency="MXN",
        account_type="SPEI",
        requested_amount=Decimal("1234567.89"),
        base_amount=Decimal("1234567.89"),
        quote_amount=Decimal("21098765.43"),
        rate=Decimal("17.123456"),
        service_rate=Decimal("17.089012"),
        base_fixed_fee=Decimal("1.00"),
        base_percentage_fee=Decimal("0.005"),
        total_fees=Decimal("6173.84"),
        status="ACTIVE",
        expires_at=now + timedelta(minutes=10),
        created_at=now,
    )
    return Records(environment, end_user, account, recipient, quote)


# (role, page): each page as a role whose work it is.
PAGES: list[tuple[str, Callable[[Records], str]]] = [
    ("compliance", lambda r: "/end-users/"),
    ("compliance", lambda r: f"/end-users/{r.end_user.pk}/"),
    ("compliance", lambda r: "/end-users/kyc/?reviewed=all"),
    ("finance_maker", lambda r: "/accounts/"),
    ("finance_maker", lambda r: f"/accounts/virtual-accounts/{r.account.pk}/"),
    ("finance_maker", lambda r: "/accounts/recipients/"),
    ("finance_maker", lambda r: f"/accounts/recipients/{r.recipient.pk}/"),
    ("finance_approver", lambda r: "/quotes/"),
    ("finance_maker", lambda r: f"/quotes/{r.quote.pk}/"),
    ("admin", lambda r: "/end-users/"),
]


def page_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the viewport (0: no horizontal scrolling)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


@pytest.mark.parametrize(
    ("role", "path_of"),
    PAGES,
    ids=[
        "end-users",
        "end-user",
        "kyc-queue",
        "virtual-accounts",
        "virtual-account",
        "recipients",
        "recipient",
        "quotes",
        "quote",
        "end-users-as-admin",
    ],
)
def test_directory_and_quote_pages_fit_a_phone_without_csp_violations(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    role: str,
    path_of: Callable[[Records], str],
) -> None:
    records = directory_and_quotes(demo_staff)
    page.set_viewport_size(PHONE)
    sign_in(page, demo_staff[role].email)
    response = page.goto(path_of(records))
    assert response is not None and response.status == 200
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    assert page_overflow(page) == 0
    assert console_errors == []
