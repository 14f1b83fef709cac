"""The payout form's choices tell themselves apart (an account by currency, mode, number and
balance; a recipient by name, rail, bank and last four) and offer only payable recipients; one
not payable, posted anyway, is refused on its field with the reason."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import RecipientStatus
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import Payout
from staff.models import StaffUser
from tests.finance import (
    make_end_user,
    make_environment,
    make_recipient,
    make_staff,
    make_virtual_account,
)
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def maker(environment: Environment) -> StaffUser:
    return make_staff("finance_maker")


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


def _options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}".*?</select>', html, re.S)
    assert select is not None
    return [o.strip() for o in re.findall(r"<option value=\"\d+\"[^>]*>(.*?)</option>", select[0])]


def test_the_accounts_of_one_holder_read_differently(
    environment: Environment, maker: StaffUser
) -> None:
    holder = make_end_user(environment, first_name="María", last_name="García")
    make_virtual_account(environment, holder, account_number="000111222333")
    make_virtual_account(environment, holder, account_number="000111229999", available_balance=None)
    make_virtual_account(
        environment, holder, mode="crypto", account_number="", upstream_id="va-abc123"
    )
    html = _client(maker, environment).get("/payouts/new/").content.decode()
    options = _options(html, "virtual_account")
    assert len(set(options)) == 3
    assert "María García · USD fiat · …2333 · balance 5,000.00 USD" in options
    assert "María García · USD fiat · …9999 · balance unknown" in options
    assert "María García · USD crypto · id …abc123 · funded by stablecoin per payout" in options


def test_only_payable_recipients_are_offered_each_named_by_bank_and_last_four(
    environment: Environment, maker: StaffUser
) -> None:
    holder = make_end_user(environment)
    make_recipient(environment, holder, created_by=maker, bank_name="First Texas Bank")
    make_recipient(
        environment,
        holder,
        created_by=maker,
        account_type="SWIFT",
        routing_number="",
        swift_code="COBADEFFXXX",
        country="DE",
        account_number="DE89370400440532013000",
    )
    for status in ("pending_approval", "rejected", "archived", "superseded"):
        make_recipient(environment, holder, created_by=maker, status=status)
    html = _client(maker, environment).get("/payouts/new/").content.decode()
    assert _options(html, "recipient") == [
        "Bea Ruiz · WIRE · First Texas Bank (US) · …6789",
        "Bea Ruiz · SWIFT · COBADEFFXXX (DE) · …3000",
    ]


def test_a_recipient_waiting_for_approval_posted_anyway_is_refused_on_its_field(
    environment: Environment, maker: StaffUser
) -> None:
    account = make_virtual_account(environment)
    waiting = make_recipient(
        environment, account.end_user, created_by=maker, status=RecipientStatus.PENDING_APPROVAL
    )
    response = _client(maker, environment).post(
        "/payouts/new/",
        {"virtual_account": account.pk, "recipient": waiting.pk, "amount": "10.00"},
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert list(errors) == ["recipient"]
    assert "waiting for a second person's approval" in errors["recipient"][0]
    assert Payout.objects.count() == 0


def test_the_form_costs_the_same_queries_whatever_the_number_of_choices(
    environment: Environment, maker: StaffUser
) -> None:
    client = _client(maker, environment)

    def queries() -> int:
        with CaptureQueriesContext(connection) as seen:
            assert client.get("/payouts/new/").status_code == 200
        return len(seen)

    holder = make_end_user(environment)
    make_virtual_account(environment, holder, account_number="1111")
    make_recipient(environment, holder, created_by=maker)
    few = queries()
    for n in range(5):
        other = make_end_user(environment)
        make_virtual_account(
            environment, other, account_number=f"22{n}", available_balance=Decimal(n)
        )
        make_recipient(environment, other, created_by=maker, bank_name=f"Bank {n}")
    assert queries() == few
