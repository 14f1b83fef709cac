"""The release step's state, decided from plain facts; and those facts read from a payout."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from gateway.models import Environment
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.release.step import (
    OtpFacts,
    OtpState,
    mask_email,
    otp_facts,
    otp_step,
    otp_step_decide,
)
from payouts.states import payout_transition
from staff.audit import audit_record
from staff.models import StaffUser
from tests.finance import make_draft, make_environment

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
SENT = OtpFacts(
    verification_email="payout-otp@payops.test",
    sent_to="payout-otp@payops.test",
    sent_at=NOW - timedelta(minutes=2),
    codes_sent=1,
    expires_at=NOW + timedelta(minutes=8),
    failed_attempts=0,
    max_tries=5,
    submitting=False,
)


def test_a_code_sent_and_still_valid_asks_for_the_digits() -> None:
    step = otp_step_decide(SENT, now=NOW)
    assert step.state == OtpState.SENT and step.can_confirm and step.can_send
    assert (step.tries_left, step.max_tries, step.error_code) == (5, 5, "")
    assert step.sent_to == "p•••@payops.test" and "p•••@payops.test" in step.message
    assert "payout-otp" not in step.message


def test_nothing_sent_yet_says_where_it_will_go_and_its_rules() -> None:
    step = otp_step_decide(replace(SENT, sent_at=None, expires_at=None, codes_sent=0), now=NOW)
    assert step.state == OtpState.NOT_SENT and step.can_send and not step.can_confirm
    assert step.error_code == "otp_not_sent"
    assert "10 minutes" in step.message and "5 tries" in step.message


def test_no_verification_email_says_who_fixes_it_and_offers_no_send() -> None:
    facts = replace(SENT, verification_email="", sent_to="", expires_at=None, sent_at=None)
    step = otp_step_decide(facts, now=NOW)
    assert step.state == OtpState.NO_EMAIL and not step.can_send and not step.can_confirm
    assert step.error_code == "no_verification_email" and "admin" in step.message


@pytest.mark.parametrize(("wrong", "left", "words"), [(1, 4, "4 tries left"), (4, 1, "1 try left")])
def test_a_wrong_code_counts_the_tries_left(wrong: int, left: int, words: str) -> None:
    step = otp_step_decide(replace(SENT, failed_attempts=wrong), now=NOW)
    assert step.state == OtpState.WRONG_CODE and step.can_confirm
    assert step.tries_left == left and step.error_code == "otp_wrong" and words in step.message


def test_five_wrong_codes_block_and_say_what_to_do_next() -> None:
    step = otp_step_decide(replace(SENT, failed_attempts=5), now=NOW)
    assert step.state == OtpState.BLOCKED and not step.can_confirm and step.can_send
    assert step.tries_left == 0 and step.error_code == "otp_blocked"
    assert "Send a new code" in step.message and "newest email" in step.message


def test_the_upstream_saying_blocked_blocks_whatever_we_counted() -> None:
    step = otp_step_decide(replace(SENT, failed_attempts=1, refusal="OTP_BLOCKED"), now=NOW)
    assert step.state == OtpState.BLOCKED and step.tries_left == 0


def test_expiry_by_our_clock_or_by_the_upstreams_word() -> None:
    at_expiry = otp_step_decide(SENT, now=SENT.expires_at or NOW)
    assert at_expiry.state == OtpState.EXPIRED and at_expiry.error_code == "otp_expired"
    assert not at_expiry.can_confirm and at_expiry.can_send
    said = otp_step_decide(replace(SENT, refusal="OTP_EXPIRED"), now=NOW)
    assert said.state == OtpState.EXPIRED and "Send a new one" in said.message


def test_blocked_wins_over_expired() -> None:
    facts = replace(SENT, failed_attempts=5)
    assert otp_step_decide(facts, now=NOW + timedelta(hours=1)).state == OtpState.BLOCKED


def test_a_later_code_replaces_this_one() -> None:
    step = otp_step_decide(replace(SENT, replaced_by=42), now=NOW)
    assert step.state == OtpState.REPLACED and not step.can_confirm and step.can_send
    assert step.error_code == "otp_replaced" and "payout #42" in step.message
    assert step.replaced_by == 42
    none_pending = otp_step_decide(replace(SENT, refusal="OTP_REQUIRED"), now=NOW)
    assert none_pending.state == OtpState.REPLACED and none_pending.replaced_by is None


def test_while_submitting_the_upstream_checks_it() -> None:
    step = otp_step_decide(replace(SENT, submitting=True, failed_attempts=5), now=NOW)
    assert step.state == OtpState.CHECKING and not step.can_send and not step.can_confirm


@pytest.mark.parametrize(
    ("email", "shown"),
    [("payout-otp@payops.test", "p•••@payops.test"), ("a@b.c", "a•••@b.c"), ("", ""), ("x", "•••")],
)
def test_the_email_is_masked(email: str, shown: str) -> None:
    assert mask_email(email) == shown


def _approved(maker: StaffUser, name: str = "Offline sandbox", **fields: object) -> Payout:
    environment = Environment.objects.filter(name=name).first() or make_environment(name)
    environment.verification_email = "payout-otp@payops.test"
    environment.save(update_fields=["verification_email"])
    payout = make_draft(maker=maker, environment=environment, **fields)
    for status in (PayoutStatus.PENDING_APPROVAL, PayoutStatus.APPROVED):
        payout_transition(payout, status, source=ChangeSource.STAFF, by=maker)
    return Payout.objects.select_related("environment").get(pk=payout.pk)


def _sent(payout: Payout, by: StaffUser, *, minutes_left: int = 9) -> None:
    """What payout_otp_send records, without the upstream call."""
    payout.otp_sent_to = payout.environment.verification_email
    payout.otp_expires_at = datetime.now(UTC) + timedelta(minutes=minutes_left)
    payout.otp_failed_attempts = 0
    payout.save(update_fields=["otp_sent_to", "otp_expires_at", "otp_failed_attempts"])
    audit_record(actor=by, action="payout.otp_sent", target=payout, details={})


def test_facts_come_from_the_payout_and_its_audit_trail(maker: StaffUser) -> None:
    payout = _approved(maker)
    assert otp_facts(payout).codes_sent == 0 and otp_facts(payout).sent_at is None
    _sent(payout, maker)
    audit_record(
        actor=None,
        action="payout.initiation_refused",
        target=payout,
        details={"code": "OTP_EXPIRED"},
    )
    facts = otp_facts(payout)
    assert facts.codes_sent == 1 and facts.sent_at is not None and facts.refusal == "OTP_EXPIRED"
    _sent(payout, maker)  # a new code: the earlier refusal no longer speaks for it
    facts = otp_facts(payout)
    assert facts.codes_sent == 2 and facts.refusal == "" and facts.max_tries == 5
    step = otp_step(payout)
    assert step is not None and step.state == OtpState.SENT and step.codes_sent == 2


def test_a_wrong_code_refusal_only_costs_a_try(maker: StaffUser) -> None:
    payout = _approved(maker)
    _sent(payout, maker)
    audit_record(
        actor=None,
        action="payout.initiation_refused",
        target=payout,
        details={"code": "INVALID_OTP"},
    )
    Payout.objects.filter(pk=payout.pk).update(otp_failed_attempts=1)
    payout.refresh_from_db()
    step = otp_step(payout)
    assert step is not None and step.state == OtpState.WRONG_CODE and step.tries_left == 4


def test_a_code_sent_later_for_another_payout_of_the_environment_replaces_it(
    maker: StaffUser,
) -> None:
    first = _approved(maker)
    _sent(first, maker, minutes_left=5)
    second = make_draft(maker=maker, environment=first.environment)
    second.otp_expires_at = datetime.now(UTC) + timedelta(minutes=9)
    second.save(update_fields=["otp_expires_at"])
    other_environment = _approved(maker, name="Another sandbox")
    _sent(other_environment, maker, minutes_left=10)  # another client: it changes nothing here
    assert otp_facts(first).replaced_by == second.pk
    step = otp_step(first)
    assert step is not None and step.state == OtpState.REPLACED
    assert otp_facts(second).replaced_by is None


def test_only_an_approved_or_submitting_fiat_payout_has_a_step(maker: StaffUser) -> None:
    payout = _approved(maker)
    assert otp_step(payout) is not None
    draft = make_draft(maker=maker, environment=payout.environment)
    assert otp_step(draft) is None
    crypto = _approved(maker, mode="crypto")
    assert otp_step(crypto) is None
    payout.upstream_id = "po_123"
    assert otp_step(payout) is None
