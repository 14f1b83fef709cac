"""How directory records read: one verification badge, a crypto account as a crypto account."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.finance import (
    make_draft,
    make_end_user,
    make_environment,
    make_staff,
    make_virtual_account,
)
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db


def _signed_in(role: str) -> tuple[Client, StaffUser]:
    user = make_staff(role)
    return client_signed_in(user), user


def test_a_verified_end_user_shows_one_verified_badge() -> None:
    client, compliance = _signed_in("compliance")
    environment = make_environment()
    environment_switch(user=compliance, environment=environment)
    end_user = make_end_user(environment, status="verified", verification_status="verified")
    html = client.get(f"/end-users/{end_user.pk}/").content.decode()
    decision = html.split('data-testid="kyc-decision"')[1].split("</section>")[0]
    assert decision.count('class="badge') == 1 and html.count(">Verified</span>") == 1
    # The user's own upstream status is still there, as a labelled fact.
    assert 'data-testid="upstream-status">Verified</dd>' in html


def test_a_crypto_account_reads_as_a_crypto_account() -> None:
    client, maker = _signed_in("finance_maker")
    environment = make_environment()
    environment_switch(user=maker, environment=environment)
    account = make_virtual_account(
        environment,
        mode="crypto",
        available_balance=Decimal("0.00"),
        balance_as_of=timezone.now(),
        account_number="",
        routing_number="",
    )
    html = client.get(f"/accounts/virtual-accounts/{account.pk}/").content.decode()
    assert "A crypto account: each payout it makes is funded by its own stablecoin deposit" in html
    assert "US_BANK / slovak_savings_bank" not in html
    assert "Crypto payouts do not draw on this balance." in html
    assert "assigned on activation" not in html  # no bank numbers promised to a crypto account
    rail = html.split('data-testid="upstream-rail">')[1].split("</dd>")[0]
    assert "US_BANK, slovak_savings_bank" in rail and "as the upstream records" in rail
    assert "no payout yet" in html.split('data-testid="crypto-funding">')[1].split("</dd>")[0]

    for network in ("polygon", "polygon", "solana"):
        make_draft(
            maker=maker,
            environment=environment,
            virtual_account=account,
            mode="crypto",
            payment_currency="USDC",
            payment_network=network,
        )
    html = client.get(f"/accounts/virtual-accounts/{account.pk}/").content.decode()
    funding = html.split('data-testid="crypto-funding">')[1].split("</dd>")[0]
    assert funding == "USDC on polygon (2 payouts), USDC on solana (1 payout)"


def test_a_fiat_account_keeps_its_bank_details() -> None:
    client, maker = _signed_in("finance_maker")
    environment = make_environment()
    environment_switch(user=maker, environment=environment)
    account = make_virtual_account(environment, account_number="", routing_number="")
    html = client.get(f"/accounts/virtual-accounts/{account.pk}/").content.decode()
    assert "US_BANK / slovak_savings_bank" in html and "assigned on activation" in html
    assert 'data-testid="crypto-funding"' not in html


def test_the_recipient_form_marks_the_fields_of_each_choice() -> None:
    client, maker = _signed_in("finance_maker")
    environment = make_environment()
    environment_switch(user=maker, environment=environment)
    html = client.get("/accounts/recipients/new/").content.decode()

    def marked(name: str) -> str:
        tag = html.split(f'data-field="{name}"')[1].split(">")[0]
        return tag.split('data-show-when="')[1].split('"')[0] if "data-show-when" in tag else ""

    assert marked("routing_number") == "account_type=WIRE"
    assert marked("swift_code") == "account_type=SWIFT"
    assert (marked("first_name"), marked("last_name")) == ("kind=individual",) * 2
    assert marked("company_name") == "kind=company"
    assert marked("account_number") == "" and marked("city") == ""  # shared by every choice
    assert "js/show_when" in html


def test_an_account_page_is_one_live_region_from_its_heading_to_its_timeline() -> None:
    # Activation changes the heading ("…pending" becomes the number's last digits), the status,
    # the balance and the facts together: a live update re-reads them together.
    client, compliance = _signed_in("compliance")
    environment = make_environment()
    environment_switch(user=compliance, environment=environment)
    account = make_virtual_account(environment, status="activating", available_balance=None)
    html = client.get(f"/accounts/virtual-accounts/{account.pk}/").content.decode()
    region = html.index(
        f'<div id="va-page" data-live-on="virtual_account.changed" '
        f'data-live-match="virtual_account_id={account.pk}">'
    )
    assert region < html.index("<h1>") < html.index('data-testid="balance"')
    assert html.count("data-live-on=") == 1  # nothing inside re-reads on its own
