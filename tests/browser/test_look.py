"""The directory, quote and payout pages on a phone (390 px): nothing overflows, under the CSP.

Each page is visited as a role that uses it, with deliberately long names, emails and amounts; the
`page` fixture fails the test on any Content-Security-Policy violation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone
from playwright.sync_api import Page, expect

from accounts.models import Recipient, VirtualAccount
from accounts.recipient_control import recipient_change_propose
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import Approval, ChangeSource, Payout, PayoutEvent, PayoutStatus
from payouts.states import payout_transition
from quotes.models import Quote
from staff.models import StaffUser
from tests.finance import (
    make_draft,
    make_end_user,
    make_environment,
    make_recipient,
    make_virtual_account,
)
from tests.payouts.live import attach_pdf
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
    # The approval queue: a new recipient and a change of bank details waiting.
    make_recipient(
        environment,
        end_user,
        created_by=staff["finance_maker"],
        company_name="Compañía Exportadora de Productos Agrícolas del Pacífico S.A. de C.V.",
        kind="company",
        status="pending_approval",
    )
    recipient_change_propose(
        recipient=recipient,
        by=staff["finance_maker"],
        values={"account_number": "987654321098", "bank_name": "Banco Nacional de México"},
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
    ("finance_maker", lambda r: f"/accounts/recipients/{r.recipient.pk}/edit/"),
    ("compliance", lambda r: "/accounts/recipients/approvals/"),
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
        "recipient-edit",
        "recipient-approvals",
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


@dataclass
class PayoutRecords:
    draft: Payout
    pending: Payout
    completed: Payout
    crypto: Payout


def _move(payout: Payout, *steps: tuple[str, str], by: StaffUser | None = None) -> Payout:
    """Walk `payout` through `steps` (status, source) as the transition table allows."""
    with transaction.atomic():
        locked = Payout.objects.select_for_update().get(pk=payout.pk)
        for status, source in steps:
            payout_transition(
                locked,
                status,
                source=source,
                by=by if source == ChangeSource.STAFF else None,
                event_id="evt_" + "0123456789abcdef" * 3 if source == ChangeSource.EVENT else "",
            )
    return Payout.objects.get(pk=payout.pk)


def payouts_at_every_stage(staff: dict[str, StaffUser]) -> PayoutRecords:
    """A draft (previewed, price reserved, a document), one pending with an approval, a completed
    one with webhook-driven timeline and an ignored report, and a crypto one with its deposit."""
    records = directory_and_quotes(staff)
    maker, approver = staff["finance_maker"], staff["finance_approver"]
    now = timezone.now()
    common = {
        "maker": maker,
        "environment": records.environment,
        "virtual_account": records.account,
        "recipient": records.recipient,
        "amount": "1234567.89",
        "reference": "INV-2026-0000001-A-RATHER-LONG-REFERENCE",
        "preview_total_fees": Decimal("6173.84"),
        "preview_recipient_amount": Decimal("21098765.43"),
        "preview_recipient_currency": "MXN",
        "previewed_at": now,
        "preview_fees": {
            "base_fees": {"fixed_fee": "1.00", "percentage_fee": "0.005", "fx_markup": "0.002"},
            "network_fee": "0.35",
        },
    }
    draft = make_draft(
        **common,
        memo="November invoice, second instalment of the framework agreement",
        preview_quote_id="quo_" + "fedcba9876543210" * 2,
        preview_quote_status="ACTIVE",
        preview_quote_expires_at=now + timedelta(minutes=15),
    )
    attach_pdf(draft, by=maker, name="invoice-2026-november-framework-agreement-signed.pdf")
    pending = make_draft(**common, approvals_required=2)
    attach_pdf(pending, by=maker)
    pending = _move(pending, (PayoutStatus.PENDING_APPROVAL, ChangeSource.STAFF), by=maker)
    Approval.objects.create(payout=pending, approver=approver, round=pending.approval_round)
    completed = make_draft(**common, upstream_id="pay_" + "0123456789abcdef" * 2)
    completed = _move(
        completed,
        (PayoutStatus.PENDING_APPROVAL, ChangeSource.STAFF),
        (PayoutStatus.APPROVED, ChangeSource.STAFF),
        (PayoutStatus.SUBMITTING, ChangeSource.SYSTEM),
        (PayoutStatus.CREATED, ChangeSource.SYSTEM),
        (PayoutStatus.PROCESSING, ChangeSource.EVENT),
        (PayoutStatus.COMPLETED, ChangeSource.POLL),
        by=maker,
    )
    PayoutEvent.objects.create(
        environment=records.environment,
        payout=completed,
        upstream_id=completed.upstream_id or "",
        event_id="evt_late_" + "0123456789abcdef" * 2,
        event_type="payout.processing",
        source=ChangeSource.EVENT,
        status=PayoutStatus.PROCESSING,
        note="arrived after completion: older than the current state",
    )
    crypto = make_draft(
        **common,
        mode="crypto",
        payment_currency="USDC",
        payment_network="solana",
        deposit_instructions={
            "amount": "1240741.73",
            "currency": "USDC",
            "network": "solana",
            "wallet_address": "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
            "expires_at": (now + timedelta(minutes=60)).isoformat(),
        },
        # Charged otherwise than shown: the flag and both figures must fit a phone too.
        charged_amount=Decimal("1234567.89"),
        charged_currency="USD",
        charged_fees={"network_fee": "0.50", "total_fees": "6174.34"},
        charged_total_fees=Decimal("6174.34"),
        charged_total=Decimal("1240742.23"),
        charged_total_currency="USDC",
        charged_recipient_amount=Decimal("21098765.43"),
        charged_recipient_currency="MXN",
        charged_at=now,
        charge_differs=True,
        charge_differences=[
            {
                "figure": "total",
                "label": "Total (debit, or deposit to send)",
                "shown": "1240741.73",
                "shown_currency": "USDC",
                "charged": "1240742.23",
                "charged_currency": "USDC",
            }
        ],
    )
    attach_pdf(crypto, by=maker)
    crypto = _move(crypto, (PayoutStatus.PENDING_APPROVAL, ChangeSource.STAFF), by=maker)
    return PayoutRecords(draft, pending, completed, crypto)


# (role, page): each payout page as a role whose work it is.
PAYOUT_PAGES: list[tuple[str, Callable[[PayoutRecords], str]]] = [
    ("finance_maker", lambda r: "/payouts/"),
    ("finance_maker", lambda r: f"/payouts/{r.draft.pk}/"),
    ("finance_approver", lambda r: f"/payouts/{r.pending.pk}/"),
    ("finance_approver", lambda r: f"/payouts/{r.completed.pk}/"),
    ("finance_approver", lambda r: f"/payouts/{r.crypto.pk}/"),
    ("finance_approver", lambda r: "/payouts/approvals/?scope=anyone"),
]


@pytest.mark.parametrize(
    ("role", "path_of"),
    PAYOUT_PAGES,
    ids=["payouts", "draft", "pending-approval", "completed", "crypto-deposit", "approval-inbox"],
)
def test_payout_pages_fit_a_phone_without_csp_violations(
    page: Page,
    demo_staff: dict[str, StaffUser],
    sign_in: Callable[..., None],
    console_errors: list[str],
    role: str,
    path_of: Callable[[PayoutRecords], str],
) -> None:
    records = payouts_at_every_stage(demo_staff)
    page.set_viewport_size(PHONE)
    sign_in(page, demo_staff[role].email)
    response = page.goto(path_of(records))
    assert response is not None and response.status == 200
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    expect(page.locator(".money", has_text="1,234,567.89 USD").first).to_be_visible()
    assert page_overflow(page) == 0
    assert console_errors == []
