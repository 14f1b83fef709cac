"""The release step on the payout page: its states as HTMX fragments, per role, and code hints.

Offline: the upstream is never reached here (every action below is refused before any call, or
only reads); the step's facts are written as `payout_otp_send` writes them. The flows that send
a real code are in test_release_step_live.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import environment_switch
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.release import code_hints
from payouts.release.code_hints import CodeHint
from payouts.states import payout_transition
from staff.audit import audit_record
from staff.models import AuditEntry, StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in

S = PayoutStatus
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def no_hint_providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Nothing registered unless a test registers it (the sandbox app's provider would call out)."""
    providers: dict[str, Any] = {}
    monkeypatch.setattr(code_hints, "CODE_HINT_PROVIDERS", providers)
    yield providers


@pytest.fixture
def people(staff: dict[str, StaffUser]) -> dict[str, StaffUser]:
    return {**staff, "compliance": make_staff("compliance")}


def client_for(user: StaffUser) -> Client:
    return client_signed_in(user)  # past sign-in's second factor


def approved(staff: dict[str, StaffUser], environment: Environment | None = None) -> Payout:
    environment = environment or Environment.objects.first() or make_environment()
    if not environment.verification_email:
        environment.verification_email = "payout-otp@payops.test"
        environment.save(update_fields=["verification_email"])
    payout = make_draft(maker=staff["maker"], environment=environment)
    for status in (S.PENDING_APPROVAL, S.APPROVED):
        payout_transition(payout, status, source=ChangeSource.STAFF, by=staff["maker"])
    return Payout.objects.get(pk=payout.pk)


def sent(payout: Payout, by: StaffUser, *, wrong: int = 0, minutes_left: float = 9) -> Payout:
    """As payout_otp_send records a code (and initiation_refused counts wrong ones)."""
    payout.otp_sent_to = payout.environment.verification_email
    payout.otp_expires_at = timezone.now() + timedelta(minutes=minutes_left)
    payout.otp_failed_attempts = wrong
    payout.save(update_fields=["otp_sent_to", "otp_expires_at", "otp_failed_attempts"])
    audit_record(actor=by, action="payout.otp_sent", target=payout, details={})
    return Payout.objects.get(pk=payout.pk)


def step_html(client: Client, payout: Payout) -> str:
    response = client.get(f"/payouts/{payout.pk}/otp/", **HX)
    assert response.status_code == 200
    return response.content.decode()


def test_the_approver_is_guided_from_not_sent_to_sent(people: dict[str, StaffUser]) -> None:
    payout = approved(people)
    client = client_for(people["approver"])
    html = step_html(client, payout)
    assert 'data-otp-state="not_sent"' in html and 'id="release-step"' in html
    assert "Send the code" in html and "p•••@payops.test" in html
    assert "payout-otp@payops.test" not in html  # masked
    assert 'data-testid="otp-confirm"' not in html
    payout = sent(payout, people["approver"])
    html = step_html(client, payout)
    assert 'data-otp-state="sent"' in html
    assert 'data-testid="otp-countdown"' in html and 'data-testid="otp-tries">5 of 5<' in html
    assert 'data-testid="otp-confirm"' in html and "Send a new code" in html
    assert 'data-testid="otp-resend-note"' in html and "replaces this one" in html
    # At zero the countdown re-reads the step, whose server view says "expired".
    assert 'hx-trigger="countdown:expired"' in html and "data-countdown-scope" in html
    assert 'hx-target="#release-step"' in html
    assert "<time datetime=" in html  # sent at, with its zone (the time component)


@pytest.mark.parametrize(
    ("wrong", "minutes_left", "state", "words", "confirm"),
    [
        (2, 9, "wrong_code", "Wrong code: 3 tries left.", True),
        (5, 9, "blocked", "this code is blocked (0 tries left). Send a new code", False),
        (0, -1, "expired", "The code expired", False),
    ],
)
def test_each_state_says_what_happened_and_what_next(
    people: dict[str, StaffUser],
    wrong: int,
    minutes_left: float,
    state: str,
    words: str,
    confirm: bool,
) -> None:
    payout = sent(approved(people), people["approver"], wrong=wrong, minutes_left=minutes_left)
    html = step_html(client_for(people["approver"]), payout)
    assert f'data-otp-state="{state}"' in html and words in html
    assert ('data-testid="otp-confirm"' in html) == confirm
    assert 'data-testid="otp-send"' in html and "Send a new code" in html


def test_a_resent_code_says_it_replaced_the_earlier_ones(people: dict[str, StaffUser]) -> None:
    payout = sent(approved(people), people["approver"])
    payout = sent(payout, people["approver"])
    html = step_html(client_for(people["approver"]), payout)
    assert "code 2: it replaced the earlier codes, which no longer work" in html


def test_no_verification_email_offers_no_send(people: dict[str, StaffUser]) -> None:
    payout = approved(people)
    Environment.objects.filter(pk=payout.environment_id).update(verification_email="")
    html = step_html(client_for(people["approver"]), payout)
    assert 'data-otp-state="no_email"' in html and "An admin sets it" in html
    assert 'data-testid="otp-send"' not in html


@pytest.mark.parametrize(
    ("who", "words"),
    [
        ("maker", "You prepared this payout"),
        ("maker_approver", "You prepared this payout"),
        ("compliance", "An approver (not the maker) sends and enters the code"),
    ],
)
def test_only_approvers_other_than_the_maker_get_the_forms(
    people: dict[str, StaffUser], who: str, words: str
) -> None:
    payout = approved(people) if who != "maker_approver" else _approved_by_maker_approver(people)
    payout = sent(payout, people["approver"])
    html = step_html(client_for(people[who]), payout)
    assert 'data-otp-state="sent"' in html and words in html  # everyone reads where it stands
    assert 'data-testid="otp-send"' not in html and 'data-testid="otp-confirm"' not in html


def _approved_by_maker_approver(people: dict[str, StaffUser]) -> Payout:
    return approved({**people, "maker": people["maker_approver"]})


@pytest.mark.parametrize(
    ("who", "refusal"),
    [
        ("maker", "Only an approver may send or enter the payout code."),
        # Holding the approver role too does not let the maker release their own payout.
        ("maker_approver", "You prepared this payout; an approver must release it."),
        ("compliance", "Only an approver may send or enter the payout code."),
    ],
)
def test_sending_and_confirming_are_refused_by_the_service_for_others(
    people: dict[str, StaffUser], who: str, refusal: str
) -> None:
    payout = approved(people) if who != "maker_approver" else _approved_by_maker_approver(people)
    payout = sent(payout, people["approver"])
    client = client_for(people[who])
    response = client.post(f"/payouts/{payout.pk}/otp/send/", **HX)
    # Refused as a person: 403, as the API answers (issue 30 item 5).
    assert response.status_code == 403 and refusal in response.content.decode()
    assert 'data-testid="otp-error"' in response.content.decode()
    response = client.post(f"/payouts/{payout.pk}/otp/confirm/", {"code": "123456"}, **HX)
    assert refusal in response.content.decode()
    payout.refresh_from_db()
    assert payout.status == S.APPROVED and not payout.otp_code_encrypted
    assert AuditEntry.objects.filter(action="payout.otp_sent").count() == 1
    assert not AuditEntry.objects.filter(action="payout.otp_entered").exists()


def test_a_code_that_cannot_work_is_refused_on_its_field_before_any_call(
    people: dict[str, StaffUser],
) -> None:
    payout = sent(approved(people), people["approver"], wrong=5)
    client = client_for(people["approver"])
    response = client.post(f"/payouts/{payout.pk}/otp/confirm/", {"code": "123456"}, **HX)
    html = response.content.decode()
    assert 'data-otp-state="blocked"' in html and 'role="alert"' in html
    assert "this code is blocked (0 tries left). Send a new code" in html
    assert 'data-testid="otp-confirm"' not in html and 'data-testid="otp-send"' in html
    payout = sent(payout, people["approver"])  # a new code: the field is back
    short = client.post(f"/payouts/{payout.pk}/otp/confirm/", {"code": "12"}, **HX)
    html = short.content.decode()
    assert 'data-testid="field-error"' in html
    assert "Ensure this value has at least 6 characters" in html
    assert 'id="release-step"' in html and "autofocus" in html  # back to the field
    payout.refresh_from_db()
    assert payout.status == S.APPROVED


def test_without_htmx_the_step_and_its_actions_go_back_to_the_page(
    people: dict[str, StaffUser],
) -> None:
    payout = sent(approved(people), people["approver"])
    client = client_for(people["maker"])
    assert client.get(f"/payouts/{payout.pk}/otp/").url == f"/payouts/{payout.pk}/"
    refused = client.post(f"/payouts/{payout.pk}/otp/send/", follow=True)
    assert "Only an approver may send or enter the payout code." in refused.content.decode()


def test_while_the_upstream_checks_the_code_the_region_re_reads_itself_for_a_while(
    people: dict[str, StaffUser], settings: Any
) -> None:
    payout = sent(approved(people), people["approver"])
    payout_transition(payout, S.SUBMITTING, source=ChangeSource.STAFF, by=people["approver"])
    Payout.objects.filter(pk=payout.pk).update(submitting_since=timezone.now())
    client = client_for(people["approver"])
    html = step_html(client, payout)
    assert 'data-otp-state="checking"' in html and 'data-testid="otp-reread"' in html
    assert 'hx-trigger="load delay:2s"' in html and 'hx-target="#payout-live"' in html
    assert 'data-testid="otp-send"' not in html
    settings.PAYOUTS_SUBMITTING_STALE_SECONDS = 0  # past it, the recovery schedule takes over
    assert 'data-testid="otp-reread"' not in step_html(client, payout)


def test_the_payout_page_holds_the_step_and_its_script(people: dict[str, StaffUser]) -> None:
    payout = sent(approved(people), people["approver"])
    page = client_for(people["approver"]).get(f"/payouts/{payout.pk}/").content.decode()
    assert 'id="release-step"' in page and "payouts/release_step.js" in page
    live = client_for(people["approver"]).get(f"/payouts/{payout.pk}/live/").content.decode()
    assert 'id="release-step"' in live


# --- code hints: only when registered, only for sandbox, only for whoever may enter the code ---


def fake_hint(payout: Payout) -> CodeHint:
    return CodeHint(
        code="424242", sent_at=timezone.now(), source="a test mailbox", more_url="/mailbox/"
    )


def test_no_provider_no_hint(people: dict[str, StaffUser]) -> None:
    payout = sent(approved(people), people["approver"])
    html = step_html(client_for(people["approver"]), payout)
    assert 'data-testid="sandbox-code-hint"' not in html and "424242" not in html


def test_a_registered_provider_offers_its_code_with_a_one_click_fill(
    people: dict[str, StaffUser], no_hint_providers: dict[str, Any]
) -> None:
    code_hints.register_code_hint("test.mailbox", fake_hint)
    assert no_hint_providers == {"test.mailbox": fake_hint}
    payout = sent(approved(people), people["approver"])
    html = step_html(client_for(people["approver"]), payout)
    assert 'data-testid="sandbox-code">424242<' in html and "Sandbox only" in html
    assert 'data-fill-code="424242"' in html and 'data-fill-target="#id_code"' in html
    assert 'href="/mailbox/"' in html
    for who in ("maker", "compliance"):  # never to whoever may not enter it
        assert "424242" not in step_html(client_for(people[who]), payout)


def test_no_hint_when_no_code_can_work(
    people: dict[str, StaffUser], no_hint_providers: dict[str, Any]
) -> None:
    code_hints.register_code_hint("test.mailbox", fake_hint)
    payout = approved(people)
    assert "424242" not in step_html(client_for(people["approver"]), payout)  # not sent yet
    payout = sent(payout, people["approver"], wrong=5)
    assert "424242" not in step_html(client_for(people["approver"]), payout)  # blocked


def test_a_production_environment_is_never_offered_a_code(
    people: dict[str, StaffUser], no_hint_providers: dict[str, Any]
) -> None:
    asked: list[int] = []

    def provider(payout: Payout) -> CodeHint:
        asked.append(payout.pk)
        return fake_hint(payout)

    code_hints.register_code_hint("test.mailbox", provider)
    production = make_environment("Production")
    Environment.objects.filter(pk=production.pk).update(kind=EnvironmentKind.PRODUCTION)
    production.refresh_from_db()
    payout = sent(approved(people, production), people["approver"])
    environment_switch(user=people["approver"], environment=production, confirmed=True)
    html = step_html(client_for(people["approver"]), payout)
    assert 'data-otp-state="sent"' in html and "424242" not in html and asked == []


def test_a_failing_provider_never_breaks_the_step(
    people: dict[str, StaffUser], no_hint_providers: dict[str, Any]
) -> None:
    def broken(payout: Payout) -> CodeHint:
        raise RuntimeError("mailbox exploded")

    code_hints.register_code_hint("test.broken", broken)
    code_hints.register_code_hint("test.mailbox", fake_hint)
    payout = sent(approved(people), people["approver"])
    assert "424242" in step_html(client_for(people["approver"]), payout)  # the next one answers
