"""What the statements page and the analytics page show before anyone picks anything: the
accounts with their balance and a statement one click away (or the only account's statement);
headline figures; charts whose axes say what they count and whose shares are of 100 %."""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal

import pytest
from django.utils import timezone

from analytics.figures import figure_build
from analytics.selectors import Period
from books.statements.forms import last_month
from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.books.statement_fixtures import October, build_october
from tests.finance import make_environment, make_virtual_account
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

QUERY = {"start": "2026-10-01", "end": "2026-10-31"}


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


def _chart(html: str, name: str) -> dict[str, object]:
    script = rf'<script id="chart-data-{name}" type="application/json">(.*?)</script>'
    found = re.search(script, html)
    assert found is not None, name
    return json.loads(found[1])


def test_shares_are_drawn_against_100_and_every_axis_says_what_it_counts(
    october: October,
    client_for,  # type: ignore[no-untyped-def]
) -> None:
    html = client_for("finance_approver").get("/analytics/", QUERY).content.decode()
    assert _chart(html, "budget")["y_max"] == 100
    assert _chart(html, "outcomes")["y_max"] == 100
    assert _chart(html, "volume")["y_title"] == "Amount sent (USD)"
    for name in ("volume", "completion", "fees", "balances", "budget", "outcomes"):
        assert _chart(html, name)["y_title"], name
    period = Period(date(2026, 10, 1), date(2026, 10, 31), october.environment)
    assert "y_max" not in figure_build("volume", period=period, by=None)["chart"]


def test_the_analytics_page_opens_with_headline_figures(
    october: October,
    client_for,  # type: ignore[no-untyped-def]
) -> None:
    html = client_for("auditor").get("/analytics/", QUERY).content.decode()
    block = re.search(r'<dl class="headlines" data-testid="headlines">(.*?)</dl>', html, re.S)
    assert block is not None
    labels = re.findall(r"<dt>(.*?)</dt>", block[1])
    assert labels == [
        "Payouts charged",
        "Amount sent",
        "Success rate (completed)",
        "Median time to complete",
        "Fees paid",
    ]
    assert " USD</dd>" in block[1] and " min</dd>" in block[1] and " %</dd>" in block[1]


def _auditor_in(october: October, demo_staff: dict[str, StaffUser]) -> StaffUser:
    auditor = demo_staff["auditor"]
    environment_switch(user=auditor, environment=october.environment)
    return auditor


def test_statements_list_each_account_with_its_balance_and_last_months_statement(
    october: October, demo_staff: dict[str, StaffUser]
) -> None:
    make_virtual_account(
        october.environment,
        account_number="5550001234",
        available_balance=Decimal("42.50"),
        balance_as_of=timezone.now(),
    )
    client = client_signed_in(_auditor_in(october, demo_staff))
    html = client.get("/books/statements/").content.decode()
    assert 'data-testid="statement-accounts"' in html and 'data-testid="statement"' not in html
    assert "42.50 USD" in html and "•••• 1234" in html
    start, end = last_month()
    link = f"?account={october.account.pk}&amp;start={start:%Y-%m-%d}&amp;end={end:%Y-%m-%d}"
    assert link in html
    assert start.day == 1 and end.month == start.month


def test_the_only_account_s_statement_shows_without_a_pick(
    october: October, demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(_auditor_in(october, demo_staff))
    html = client.get("/books/statements/").content.decode()
    assert 'data-testid="statement"' in html
    assert 'data-testid="statement-accounts"' not in html
