"""What an approver sees before approving a recipient: every bank detail the recipient's rail
holds, a change's before and after side by side with the changed fields marked, and, for a
person who may not approve, one plain line saying who can (no step-up, no buttons)."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.bank_details import account_number_shown, compared_rows
from accounts.models import Recipient, RecipientStatus
from accounts.recipient_control import current_values, recipient_change_propose
from gateway.models import Environment
from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.finance import make_end_user, make_environment, make_recipient
from tests.identity import client_signed_in

QUEUE = "/accounts/recipients/approvals/"


@pytest.fixture
def offline(db: None) -> Environment:
    return make_environment()


def _client(user: StaffUser, environment: Environment, *, fresh: bool = True) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user, second_factor=fresh)


def _swift(environment: Environment, creator: StaffUser, **fields: object) -> Recipient:
    values = {
        "kind": "company",
        "company_name": "Müller Handels GmbH",
        "first_name": "",
        "last_name": "",
        "country": "DE",
        "city": "Berlin",
        "account_type": "SWIFT",
        "account_number": "DE89370400440532013000",
        "routing_number": "",
        "swift_code": "COBADEFFXXX",
        "bank_name": "Commerzbank",
        "status": RecipientStatus.PENDING_APPROVAL,
        **fields,
    }
    return make_recipient(environment, make_end_user(environment), created_by=creator, **values)


def test_the_queue_shows_every_bank_detail_an_approver_checks(
    offline: Environment, staff: dict[str, StaffUser]
) -> None:
    make_recipient(
        offline,
        make_end_user(offline),
        created_by=staff["finance_maker"],
        bank_name="First Texas Bank",
        status=RecipientStatus.PENDING_APPROVAL,
    )
    _swift(offline, staff["finance_maker"])
    html = _client(staff["finance_approver"], offline).get(QUEUE).content.decode()
    # WIRE: holder, bank, country, ABA routing number whole, the account number's last four.
    for shown in ("Bea Ruiz", "First Texas Bank", "United States", "021000021", "…6789"):
        assert shown in html, shown
    # SWIFT in an IBAN country: the BIC whole, the IBAN's country, check digits and last four.
    for shown in ("Müller Handels GmbH", "Commerzbank", "Germany", "COBADEFFXXX", "DE89 …3000"):
        assert shown in html, shown
    assert "123456789" not in html and "DE89370400440532013000" not in html


def test_a_change_shows_every_field_before_and_after_with_the_changed_ones_marked(
    offline: Environment, staff: dict[str, StaffUser]
) -> None:
    recipient = make_recipient(
        offline, make_end_user(offline), created_by=staff["compliance"], bank_name="Old Bank"
    )
    recipient_change_propose(
        recipient=recipient,
        by=staff["finance_maker"],
        values={"account_number": "987654321", "bank_name": "New Bank"},
    )
    for path in (QUEUE, f"/accounts/recipients/{recipient.pk}/"):
        html = _client(staff["finance_approver"], offline).get(path).content.decode()
        assert 'data-testid="change-compare"' in html, path
        assert 'data-changed="account_number"' in html and 'data-changed="bank_name"' in html
        assert 'data-changed="holder"' not in html and 'data-changed="routing_number"' not in html
        # Unchanged fields are shown too, on both sides.
        assert html.count("021000021") == 2, path
        assert "Old Bank" in html and "New Bank" in html and "…4321" in html


def test_an_account_number_changed_with_the_same_last_four_is_still_marked() -> None:
    before = {"account_type": "WIRE", "country": "US", "account_number": "111116789"}
    rows = {r.key: r for r in compared_rows(before, {**before, "account_number": "999996789"})}
    assert rows["account_number"].before == rows["account_number"].after == "…6789"
    assert rows["account_number"].changed
    assert account_number_shown({"account_type": "WIRE", "account_number": ""}) == ""


def test_someone_who_may_not_approve_is_offered_no_step_up_and_no_buttons(
    offline: Environment, staff: dict[str, StaffUser]
) -> None:
    waiting = _swift(offline, staff["compliance"])
    maker = _client(staff["finance_maker"], offline, fresh=False)
    for path in (QUEUE, f"/accounts/recipients/{waiting.pk}/"):
        html = maker.get(path).content.decode()
        assert 'data-testid="step-up-link"' not in html, path
        assert 'data-testid="recipient-approve"' not in html, path
        assert 'data-testid="recipient-reject"' not in html, path
        assert "approved by: Compliance, Finance approver" in html, path
    # The creator, an approver by role, is told why; an approver who may is offered both.
    creator = _client(staff["compliance"], offline, fresh=False)
    html = creator.get(f"/accounts/recipients/{waiting.pk}/").content.decode()
    assert 'data-testid="step-up-link"' not in html and "someone else must approve" in html
    approver = _client(staff["finance_approver"], offline, fresh=False)
    html = approver.get(f"/accounts/recipients/{waiting.pk}/").content.decode()
    assert 'data-testid="step-up-link"' in html and 'data-testid="recipient-approve"' in html


def test_the_detail_page_shows_the_bank_details_of_an_approved_recipient(
    offline: Environment, staff: dict[str, StaffUser]
) -> None:
    recipient = _swift(offline, staff["compliance"], status=RecipientStatus.APPROVED)
    html = (
        _client(staff["finance_maker"], offline)
        .get(f"/accounts/recipients/{recipient.pk}/")
        .content.decode()
    )
    assert 'data-testid="bank-details"' in html
    assert "COBADEFFXXX" in html and "DE89 …3000" in html and "IBAN" in html
    assert current_values(recipient)["account_number"] not in html
