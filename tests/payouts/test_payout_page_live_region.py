"""The payout page is one live region: an action's answer and a live update re-render every fact
on it (header, quote, countdown); the person's next action comes right after the header."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from gateway.models import Environment
from payouts.models import Payout, PayoutStatus
from staff.models import StaffUser
from tests.finance import make_draft, make_environment
from tests.identity import client_signed_in

S = PayoutStatus


def payout_in(staff: dict[str, StaffUser], status: str, **fields: object) -> Payout:
    environment = Environment.objects.first() or make_environment()
    return make_draft(maker=staff["maker"], environment=environment, status=status, **fields)


def reserved(**more: object) -> dict[str, object]:
    now = timezone.now()
    return {
        "previewed_at": now,
        "preview_total_fees": Decimal("2.50"),
        "preview_quote_id": "quo_reserved_1",
        "preview_quote_status": "ACTIVE",
        "preview_quote_expires_at": now + timedelta(minutes=15),
        **more,
    }


def test_the_live_fragment_is_the_whole_payout_page(staff: dict[str, StaffUser]) -> None:
    payout = payout_in(staff, S.CREATED, upstream_id="po_123", **reserved())
    client = client_signed_in(staff["approver"])
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    live = client.get(f"/payouts/{payout.pk}/live/").content.decode()

    assert live.lstrip().startswith('<div id="payout-live"')
    # The header's facts and the panels above the status are in it, as in the page.
    for fact in (f"Payout #{payout.pk}</h1>", "<dd>po_123</dd>", 'data-testid="preview-panel"'):
        assert fact in live
        assert page.index('id="payout-live"') < page.index(fact)


def test_the_header_names_the_reserved_quote_instead_of_pricing_at_execution(
    staff: dict[str, StaffUser],
) -> None:
    with_reservation = payout_in(staff, S.PENDING_APPROVAL, **reserved())
    without = payout_in(staff, S.PENDING_APPROVAL)
    client = client_signed_in(staff["approver"])

    page = client.get(f"/payouts/{with_reservation.pk}/").content.decode()
    assert "none: priced at execution" not in page
    assert "<code>quo_reserved_1</code> (reserved price)" in page
    assert "none: priced at execution" in client.get(f"/payouts/{without.pk}/").content.decode()


@pytest.mark.parametrize(
    ("status", "ticks"),
    [
        (S.DRAFT, True),
        (S.PENDING_APPROVAL, True),
        (S.APPROVED, True),
        (S.SUBMITTING, True),
        (S.CREATED, False),
        (S.COMPLETED, False),
        (S.FAILED, False),
        (S.CANCELLED, False),
        (S.REJECTED, False),
    ],
)
def test_the_reservation_counts_down_only_while_its_price_is_still_to_be_used(
    staff: dict[str, StaffUser], status: str, ticks: bool
) -> None:
    payout = payout_in(staff, status, **reserved())
    page = client_signed_in(staff["maker"]).get(f"/payouts/{payout.pk}/").content.decode()
    assert ('data-testid="reservation-countdown"' in page) == ticks
    assert "quo_reserved_1" in page  # the reservation itself stays a fact


@pytest.mark.parametrize("status", [S.COMPLETED, S.FAILED])
def test_an_ended_payout_shows_no_expired_badge_for_a_reservation_that_ran_out(
    staff: dict[str, StaffUser], status: str
) -> None:
    past = timezone.now() - timedelta(minutes=1)
    payout = payout_in(staff, status, **reserved(preview_quote_expires_at=past))
    page = client_signed_in(staff["maker"]).get(f"/payouts/{payout.pk}/").content.decode()
    preview = page[page.index('data-testid="preview-panel"') :]
    assert "expired" not in preview[: preview.index("</section>")]


def test_approving_is_the_approvers_next_action_right_after_the_header(
    staff: dict[str, StaffUser],
) -> None:
    payout = payout_in(staff, S.PENDING_APPROVAL)
    page = client_signed_in(staff["approver"]).get(f"/payouts/{payout.pk}/").content.decode()
    heading = page.index(f"Payout #{payout.pk}</h1>")
    action = page.index('data-testid="next-action"')
    facts = page.index('data-testid="payout-amount"')  # the header's facts follow the action
    assert heading < action < page.index('data-testid="approve"') < facts
    assert action < page.index('data-testid="reject"') < page.index('data-testid="status-panel"')

    makers = client_signed_in(staff["maker"]).get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="next-action"' not in makers


def test_releasing_is_the_approvers_next_action_and_only_theirs(
    staff: dict[str, StaffUser],
) -> None:
    payout = payout_in(staff, S.APPROVED)
    page = client_signed_in(staff["approver"]).get(f"/payouts/{payout.pk}/").content.decode()
    action = page.index('data-testid="next-action"')
    facts = page.index('data-testid="payout-amount"')
    assert action < page.index('data-testid="otp-panel"') < facts
    assert page.count('data-testid="otp-panel"') == 1

    makers = client_signed_in(staff["maker"]).get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="next-action"' not in makers
    assert makers.index("approvals-panel") < makers.index('data-testid="otp-panel"')
