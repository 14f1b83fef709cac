"""A role's refusal on a payout page is a 403 (issue 30 item 5): the auditor's POST to the
approve page answered 302, as a success does, because the page caught the service's
PermissionDenied and redirected back with a message."""

from __future__ import annotations

import pytest

from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.models import StaffUser
from staff.roles import APPROVAL_POLICY_MANAGE, PAYOUT_APPROVE, ROLES
from tests.finance import make_draft, make_environment
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db
S = PayoutStatus
# The payout pages' actions an approver takes, and what each needs in its body.
ACTIONS = {
    "approve": {},
    "reject": {"reason": "No invoice"},
    "cancel": {},
    "otp/send": {},
    "otp/confirm": {"code": "123456"},
    "resend": {},
    "withdraw-approval": {"reason": "Second thoughts"},
    "requote": {},
}


def _pending(maker: StaffUser) -> Payout:
    payout = make_draft(maker=maker, environment=make_environment())
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker)
    return Payout.objects.get(pk=payout.pk)


@pytest.mark.parametrize("role", [role.key for role in ROLES])
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_each_role_posting_to_the_approve_page(
    demo_staff: dict[str, StaffUser], role: str, htmx: bool
) -> None:
    payout = _pending(demo_staff["finance_maker"])
    user = demo_staff[role]
    headers = {"HX-Request": "true"} if htmx else {}
    response = client_signed_in(user).post(f"/payouts/{payout.pk}/approve/", headers=headers)
    payout.refresh_from_db()
    may = user.has_perm(PAYOUT_APPROVE) or user.has_perm(APPROVAL_POLICY_MANAGE)
    if not may:
        assert response.status_code == 403, (role, response.status_code)
        assert payout.status == S.PENDING_APPROVAL and not payout.approvals.exists()
    elif role == "finance_approver":
        assert response.status_code == (200 if htmx else 302)
        assert payout.approvals.filter(approver=user).exists()


@pytest.mark.parametrize("action", list(ACTIONS))
def test_the_auditor_is_refused_every_payout_action_with_403(
    demo_staff: dict[str, StaffUser], action: str
) -> None:
    payout = _pending(demo_staff["finance_maker"])
    client = client_signed_in(demo_staff["auditor"])
    response = client.post(f"/payouts/{payout.pk}/{action}/", ACTIONS[action])
    assert response.status_code == 403, (action, response.status_code)
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL
