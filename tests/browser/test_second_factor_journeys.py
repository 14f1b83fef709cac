"""Chromium journeys of the second factor: enrolment with an authenticator app and the recovery
codes shown once, sign-in with a code, step-up and back, a recovery code, and a passkey
(registered and used through Chromium's virtual authenticator). The `page` fixture fails each
journey on any Content-Security-Policy violation."""

from __future__ import annotations

import re
from base64 import b32decode
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django_otp.oath import totp
from playwright.sync_api import Page, expect

from accounts.models import Recipient, RecipientStatus
from gateway.services.environments import environment_switch
from staff.models import AuthenticatorDevice, StaffUser
from staff.second_factor.recovery import recovery_codes_issue
from tests.browser.conftest import authenticator_code
from tests.finance import make_end_user, make_environment, make_recipient

pytestmark = pytest.mark.browser

PASSWORD = "pw-journey-second-factor-1"


def _person(email: str, role: str) -> StaffUser:
    user = StaffUser.objects.create_user(email, PASSWORD)
    user.groups.add(Group.objects.get(name=role))
    return user


def _password(page: Page, email: str, password: str = PASSWORD, next_url: str = "") -> None:
    page.goto("/login/" + (f"?next={next_url}" if next_url else ""))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def _code_from_secret(secret: str) -> str:
    key = b32decode(secret.replace(" ", "") + "=" * (-len(secret.replace(" ", "")) % 8))
    return str(totp(key)).zfill(6)


def test_enrolment_with_an_authenticator_app_shows_recovery_codes_once(
    page: Page, demo_staff: dict[str, StaffUser]
) -> None:
    _person("approver-journey@example.test", "finance_approver")
    _password(page, "approver-journey@example.test", next_url="/payouts/")

    expect(page.get_by_role("heading", level=1)).to_have_text("Set up a second factor")
    expect(page.get_by_test_id("enrol-required")).to_be_visible()
    # An unfinished sign-in shows no menu: its links would only lead back here.
    expect(page.get_by_test_id("nav-menu")).to_have_count(0)
    expect(page.get_by_test_id("totp-qr").locator("svg")).to_be_visible()
    secret = page.get_by_test_id("totp-secret").inner_text()
    page.get_by_label("Code from your app").fill("000000")
    page.get_by_role("button", name="Confirm app").click()
    expect(page.get_by_test_id("field-error")).to_contain_text("not right")
    # A wrong code starts django-otp's throttle (a growing wait); a person types slower than this.
    AuthenticatorDevice.objects.filter(user__email="approver-journey@example.test").update(
        throttling_failure_count=0
    )

    page.get_by_label("Code from your app").fill(_code_from_secret(secret))
    page.get_by_role("button", name="Confirm app").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Your recovery codes")
    codes = page.get_by_test_id("recovery-codes").locator("code").all_inner_texts()
    assert len(codes) == 10
    assert all(re.fullmatch(r"[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}", code) for code in codes)
    page.get_by_test_id("codes-saved").click()
    expect(page).to_have_url(re.compile(r"/payouts/$"))
    page.goto("/login/recovery-codes/")
    expect(page.get_by_test_id("recovery-codes")).to_have_count(0)


def test_compliance_enrols_on_the_way_to_a_recipient_then_approves_it(
    page: Page, demo_staff: dict[str, StaffUser]
) -> None:
    """Compliance approves recipients, so it must have a second factor: a new compliance person
    enrols at sign-in, lands back on the recipient they were going to, and Approve needs no
    other prompt (enrolling just verified the session)."""
    person = _person("compliance-journey@example.test", "compliance")
    environment = make_environment()
    environment_switch(user=person, environment=environment)
    recipient = make_recipient(
        environment,
        make_end_user(environment),
        created_by=demo_staff["finance_maker"],
        status=RecipientStatus.PENDING_APPROVAL,
        approval_note="",
    )
    _password(page, person.email, next_url=f"/accounts/recipients/{recipient.pk}/")

    expect(page.get_by_test_id("enrol-required")).to_be_visible()
    secret = page.get_by_test_id("totp-secret").inner_text()
    page.get_by_label("Code from your app").fill(_code_from_secret(secret))
    page.get_by_role("button", name="Confirm app").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your recovery codes")
    page.get_by_test_id("codes-saved").click()

    expect(page).to_have_url(re.compile(rf"/accounts/recipients/{recipient.pk}/$"))
    page.get_by_test_id("recipient-approve").click()
    expect(page.get_by_text("Approved: the recipient can be paid.")).to_be_visible()
    assert Recipient.objects.get(pk=recipient.pk).status == RecipientStatus.APPROVED


def test_sign_in_with_an_authenticator_code(page: Page, demo_staff: dict[str, StaffUser]) -> None:
    _password(page, "approver@payops.local", password="payops-demo")

    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm it is you")
    expect(page.get_by_test_id("demo-code")).to_be_visible()
    page.get_by_label("Code").fill(authenticator_code("approver@payops.local"))
    page.get_by_role("button", name="Verify").click()

    expect(page.get_by_test_id("user-email")).to_have_text("approver@payops.local")
    expect(page).to_have_url(re.compile(r"/$"))


def test_step_up_and_back(
    page: Page, demo_staff: dict[str, StaffUser], sign_in: Callable[..., None]
) -> None:
    sign_in(page, "approver@payops.local")
    page.goto("/step-up/?next=/payouts/")

    expect(page.get_by_test_id("step-up-why")).to_contain_text(
        "Approving, releasing and changing credentials need a second factor verified in the "
        "last 5 minutes"
    )
    page.get_by_label("Code").fill(authenticator_code("approver@payops.local"))
    page.get_by_role("button", name="Verify").click()

    expect(page).to_have_url(re.compile(r"/payouts/$"))


def test_sign_in_with_a_recovery_code(page: Page, demo_staff: dict[str, StaffUser]) -> None:
    approver = demo_staff["finance_approver"]
    codes = recovery_codes_issue(user=approver, by=approver)
    _password(page, approver.email, password="payops-demo")

    page.get_by_label("Code").fill(codes[0])
    page.get_by_role("button", name="Verify").click()

    expect(page.get_by_role("status").filter(has_text="Recovery code used")).to_have_text(
        "Recovery code used; 9 left."
    )
    expect(page.get_by_test_id("user-email")).to_have_text(approver.email)


def _virtual_authenticator(page: Page) -> Any:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
            }
        },
    )
    return cdp


def test_passkey_enrolment_then_sign_in_with_it(
    page: Page, demo_staff: dict[str, StaffUser], live_server: Any, settings: Any
) -> None:
    settings.OTP_WEBAUTHN_RP_ID = "localhost"
    settings.OTP_WEBAUTHN_ALLOWED_ORIGINS = [live_server.url]
    _virtual_authenticator(page)
    _person("admin-passkey@example.test", "admin")
    _password(page, "admin-passkey@example.test")

    expect(page.get_by_role("heading", level=1)).to_have_text("Set up a second factor")
    page.get_by_role("button", name="Add a passkey").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your recovery codes")
    expect(page.get_by_test_id("recovery-codes").locator("code")).to_have_count(10)
    page.get_by_test_id("codes-saved").click()
    expect(page.get_by_test_id("user-email")).to_have_text("admin-passkey@example.test")
    page.get_by_role("button", name="Sign out").click()

    _password(page, "admin-passkey@example.test", next_url="/profile/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Confirm it is you")
    page.get_by_role("button", name="Use a passkey").click()

    expect(page).to_have_url(re.compile(r"/profile/$"))
    expect(page.get_by_test_id("second-factor-devices")).to_contain_text("Passkey")

    # Step-up with the same passkey, and back to where it was asked for.
    page.goto("/step-up/?next=/payouts/")
    page.get_by_role("button", name="Use a passkey").click()
    expect(page).to_have_url(re.compile(r"/payouts/$"))
