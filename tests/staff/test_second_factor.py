"""The second factor at sign-in: each method, wrong codes, the gate, enrolment, recovery codes,
the step-up page, device removal, the demo code hint and who may open which page."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django_otp import DEVICE_ID_SESSION_KEY

from staff.models import AuditEntry, AuthenticatorDevice
from staff.roles import roles_sync
from staff.second_factor.demo import demo_code_hint, demo_codes
from staff.second_factor.recovery import recovery_codes_issue
from staff.step_up import SECOND_FACTOR_AT_SESSION_KEY, proof_of
from tests.identity import client_signed_in, enrolled
from tests.staff.second_factor_support import (
    code_now,
    fresh_code,
    password_signed_in,
    person,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _roles() -> None:
    roles_sync()


def _audits(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action).order_by("at", "id"))


def test_a_password_alone_leads_to_the_second_step_and_a_totp_code_completes_sign_in() -> None:
    approver = person("approver-2fa@example.test", "finance_approver")
    device = enrolled(approver)
    client = password_signed_in(approver)

    response = client.get("/payouts/")
    assert response.status_code == 302
    assert response["Location"] == "/login/second-factor/?next=%2Fpayouts%2F"

    response = client.post("/login/second-factor/", {"code": code_now(device), "next": "/payouts/"})
    assert response.status_code == 302
    assert response["Location"] == "/payouts/"
    session = client.session
    assert session[DEVICE_ID_SESSION_KEY] == device.persistent_id
    verified_at = timezone.datetime.fromisoformat(session[SECOND_FACTOR_AT_SESSION_KEY])
    assert timezone.now() - verified_at < timedelta(minutes=1)
    [entry] = _audits("staff.second_factor_verified")
    assert entry.actor == approver
    assert entry.details == {"method": "totp", "purpose": "sign_in"}
    assert client.get("/payouts/").status_code == 200


def test_a_wrong_code_is_refused_on_the_code_field_audited_and_throttled() -> None:
    approver = person("approver-wrong@example.test", "finance_approver")
    device = enrolled(approver)
    client = password_signed_in(approver)
    wrong = str((int(code_now(device)) + 1) % 1_000_000).zfill(6)

    response = client.post("/login/second-factor/", {"code": wrong})

    assert response.status_code == 200
    assert "code" in response.context["form"].errors
    assert "not right" in response.context["form"].errors["code"][0]
    assert _audits("staff.second_factor_failed")[0].actor == approver
    device.refresh_from_db()
    assert device.throttling_failure_count == 1
    # The throttle now refuses even the right code until its wait is over.
    response = client.post("/login/second-factor/", {"code": code_now(device)})
    assert "Too many wrong codes" in response.context["form"].errors["code"][0]
    assert client.get("/").status_code == 302


def test_a_code_already_used_is_refused() -> None:
    approver = person("approver-replay@example.test", "finance_approver")
    device = enrolled(approver)
    code = fresh_code(device)
    first = password_signed_in(approver)
    assert first.post("/login/second-factor/", {"code": code}).status_code == 302

    second = password_signed_in(approver)
    response = second.post("/login/second-factor/", {"code": code})
    assert response.status_code == 200
    assert response.context["form"].errors["code"]


def test_an_unverified_session_reaches_nothing_but_the_second_factor_pages_and_sign_out() -> None:
    approver = person("approver-gate@example.test", "finance_approver")
    enrolled(approver)
    client = password_signed_in(approver)

    for path in ("/", "/payouts/", "/profile/", "/step-up/", "/login/enrol/", "/admin/"):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/login/second-factor/"), path
    assert client.post("/profile/", {"name": "x"}).status_code == 302
    api = client.get("/api/v1/me")
    assert api.status_code == 401
    assert api.json() == {
        "code": "second_factor_required",
        "message": "Sign-in is not complete: verify your second factor first (on the sign-in "
        "pages).",
        "errors": [],
    }
    assert client.get("/login/second-factor/").status_code == 200
    response = client.post("/logout/")
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session


def test_the_proof_and_djangos_otp_state_are_on_the_same_user_object() -> None:
    approver = person("approver-proof@example.test", "finance_approver")
    client = client_signed_in(approver)

    response = client.get("/profile/")

    user = response.wsgi_request.user
    assert user.is_verified()
    assert user.otp_device == enrolled(approver)
    proof = proof_of(user)
    assert proof is not None and proof.second_factor_at is not None


def test_a_role_that_requires_a_second_factor_enrols_with_an_authenticator_app() -> None:
    admin = person("admin-enrol@example.test", "admin")
    client = password_signed_in(admin)

    response = client.get("/payouts/")
    assert response["Location"] == "/login/enrol/?next=%2Fpayouts%2F"
    assert client.get("/").status_code == 302
    page = client.get("/login/enrol/?next=/payouts/")
    assert page.status_code == 200
    assert b"<svg" in page.content
    assert b"Your role needs a second factor" in page.content
    device = AuthenticatorDevice.objects.get(user=admin, confirmed=False)
    secret = page.context["secret"].replace(" ", "")
    assert secret and device.config_url.find(secret) > 0

    refused = client.post("/login/enrol/totp/", {"code": "000000", "next": "/payouts/"})
    assert refused.status_code == 400
    assert refused.context["form"].errors["code"]

    response = client.post("/login/enrol/totp/", {"code": fresh_code(device), "next": "/payouts/"})
    assert response.status_code == 302
    assert response["Location"] == "/login/recovery-codes/?next=%2Fpayouts%2F"
    codes_page = client.get(response["Location"])
    codes = codes_page.context["codes"]
    assert len(codes) == 10 and len(set(codes)) == 10
    # Shown once: the codes are gone from the session, and only hashes are stored.
    assert client.get("/login/recovery-codes/").status_code == 302
    from staff.second_factor.models import RecoveryCode

    stored = set(RecoveryCode.objects.values_list("code_hash", flat=True))
    assert not stored & set(codes)
    assert client.get("/payouts/").status_code == 200
    enrolled_entry = _audits("staff.second_factor_enrolled")[0]
    assert enrolled_entry.details["method"] == "totp"


def test_enrolment_is_optional_for_other_roles_and_they_may_enrol_from_the_profile() -> None:
    maker = person("maker-optional@example.test", "finance_maker")
    client = password_signed_in(maker)

    assert client.get("/").status_code == 200
    profile = client.get("/profile/")
    assert b"Sign-in security" in profile.content
    assert b"optional for your role" in profile.content
    assert client.get("/login/enrol/").status_code == 200
    device = AuthenticatorDevice.objects.get(user=maker, confirmed=False)
    response = client.post("/login/enrol/totp/", {"code": fresh_code(device)})
    assert response.status_code == 302
    assert AuthenticatorDevice.objects.get(pk=device.pk).confirmed


def test_the_second_factor_roles_setting_decides_who_must_enrol(settings: Any) -> None:
    settings.PAYOPS_SECOND_FACTOR_ROLES = ["finance_maker"]
    maker = person("maker-required@example.test", "finance_maker")
    approver = person("approver-optional@example.test", "finance_approver")
    superuser = person("root-required@example.test", superuser=True)

    assert password_signed_in(maker).get("/")["Location"].startswith("/login/enrol/")
    assert password_signed_in(approver).get("/").status_code == 200
    assert password_signed_in(superuser).get("/")["Location"].startswith("/login/enrol/")


def test_a_recovery_code_signs_in_once_and_says_how_many_remain() -> None:
    approver = person("approver-recovery@example.test", "finance_approver")
    enrolled(approver)
    codes = recovery_codes_issue(user=approver, by=approver)
    client = password_signed_in(approver)

    response = client.post("/login/second-factor/", {"code": codes[3].lower()}, follow=True)

    assert response.redirect_chain[0] == ("/", 302)
    assert "Recovery code used; 9 left." in [str(m) for m in response.context["messages"]]
    assert _audits("staff.second_factor_verified")[-1].details["method"] == "recovery_code"
    again = password_signed_in(approver)
    refused = again.post("/login/second-factor/", {"code": codes[3]})
    assert refused.status_code == 200
    assert refused.context["form"].errors["code"]


def test_the_step_up_page_says_why_sets_freshness_and_returns_to_the_local_next() -> None:
    approver = person("approver-stepup@example.test", "finance_approver")
    device = enrolled(approver)
    client = client_signed_in(approver, second_factor=False)
    before = client.session[SECOND_FACTOR_AT_SESSION_KEY]

    page = client.get("/step-up/?next=/payouts/")
    assert page.status_code == 200
    assert (
        b"Approving, releasing and changing credentials need a second factor verified in the "
        b"last 5 minutes" in page.content
    )
    response = client.post("/step-up/", {"code": fresh_code(device), "next": "/payouts/"})

    assert response.status_code == 302
    assert response["Location"] == "/payouts/"
    assert client.session[SECOND_FACTOR_AT_SESSION_KEY] > before
    assert _audits("staff.second_factor_verified")[-1].details["purpose"] == "step_up"


@pytest.mark.parametrize("next_url", ["https://evil.example/", "//evil.example/x", "javascript:1"])
def test_the_step_up_page_never_redirects_off_the_site(next_url: str) -> None:
    approver = person("approver-next@example.test", "finance_approver")
    device = enrolled(approver)
    client = client_signed_in(approver, second_factor=False)

    response = client.post("/step-up/", {"code": fresh_code(device), "next": next_url})

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_step_up_without_a_second_factor_says_to_set_one_up() -> None:
    maker = person("maker-none@example.test", "finance_maker")
    client = Client()
    client.force_login(maker)

    page = client.get("/step-up/?next=/payouts/")

    assert page.status_code == 200
    assert b'data-testid="no-second-factor"' in page.content


def test_removing_a_device_needs_step_up_and_never_the_last_of_a_required_role() -> None:
    approver = person("approver-remove@example.test", "finance_approver")
    device = enrolled(approver)
    stale = client_signed_in(approver, second_factor=False)
    url = f"/profile/second-factor/totp/{device.pk}/remove/"

    response = stale.post(url)
    assert response["Location"] == "/step-up/?next=%2Fprofile%2F"
    assert AuthenticatorDevice.objects.filter(pk=device.pk).exists()

    fresh = client_signed_in(approver)
    response = fresh.post(url, follow=True)
    assert AuthenticatorDevice.objects.filter(pk=device.pk).exists()
    assert any("add another device" in str(m) for m in response.context["messages"])


def test_a_person_of_an_optional_role_may_remove_their_last_device_and_not_anothers() -> None:
    maker = person("maker-remove@example.test", "finance_maker")
    other = person("maker-other@example.test", "finance_maker")
    device = enrolled(maker)
    theirs = enrolled(other)
    client = client_signed_in(maker)

    assert client.post(f"/profile/second-factor/totp/{theirs.pk}/remove/").status_code == 403
    response = client.post(f"/profile/second-factor/totp/{device.pk}/remove/")
    assert response.status_code == 302
    assert not AuthenticatorDevice.objects.filter(pk=device.pk).exists()
    assert _audits("staff.second_factor_removed")[0].actor == maker


def test_regenerating_recovery_codes_needs_step_up_and_replaces_the_old_ones() -> None:
    approver = person("approver-regen@example.test", "finance_approver")
    enrolled(approver)
    old = recovery_codes_issue(user=approver, by=approver)

    stale = client_signed_in(approver, second_factor=False)
    assert stale.post("/login/recovery-codes/")["Location"].startswith("/step-up/")
    fresh = client_signed_in(approver)
    page = fresh.post("/login/recovery-codes/")
    new = page.context["codes"]
    assert len(new) == 10 and not set(new) & set(old)
    assert (
        password_signed_in(approver).post("/login/second-factor/", {"code": new[0]}).status_code
        == 302
    )
    assert (
        password_signed_in(approver).post("/login/second-factor/", {"code": old[0]}).status_code
        == 200
    )


def test_adding_a_device_to_an_enrolled_account_needs_step_up() -> None:
    approver = person("approver-add@example.test", "finance_approver")
    enrolled(approver)
    stale = client_signed_in(approver, second_factor=False)

    response = stale.get("/login/enrol/")

    assert response["Location"] == "/step-up/?next=%2Flogin%2Fenrol%2F"
    assert client_signed_in(approver).get("/login/enrol/").status_code == 200


def test_the_demo_approver_and_admin_come_enrolled_and_their_code_shows_on_the_pages(
    demo_staff: dict[str, Any],
) -> None:
    approver = demo_staff["finance_approver"]
    device = AuthenticatorDevice.objects.get(user=approver, confirmed=True)
    assert AuthenticatorDevice.objects.filter(user=demo_staff["admin"], confirmed=True).exists()
    assert not AuthenticatorDevice.objects.filter(user=demo_staff["finance_maker"]).exists()
    client = Client()
    client.post("/login/", {"username": approver.email, "password": "payops-demo"})

    page = client.get("/login/second-factor/")
    assert b'data-testid="demo-code"' in page.content
    assert page.context["demo_code"] == code_now(device)
    login_page = Client().get("/login/")
    assert b'data-testid="demo-code-finance_approver"' in login_page.content


def test_the_demo_code_hint_is_never_shown_where_demo_staff_are_off(
    demo_staff: dict[str, Any], settings: Any
) -> None:
    settings.PAYOPS_SEED_DEMO_STAFF = False
    approver = demo_staff["finance_approver"]
    assert demo_code_hint(approver) is None
    assert demo_codes() == {}
    client = Client()
    client.post("/login/", {"username": approver.email, "password": "payops-demo"})
    assert b"demo-code" not in client.get("/login/second-factor/").content
    assert b"demo-code" not in Client().get("/login/").content


def test_the_demo_code_hint_is_only_for_demo_people() -> None:
    approver = person("approver-real@example.test", "finance_approver")
    enrolled(approver)
    assert demo_code_hint(approver) is None


ROLE_KEYS = ["finance_maker", "finance_approver", "compliance", "admin"]


@pytest.mark.parametrize("role", ROLE_KEYS)
def test_every_role_may_open_its_own_second_factor_pages(role: str) -> None:
    user = person(f"{role}-pages@example.test", role)
    client = client_signed_in(user)

    assert client.get("/profile/").status_code == 200
    assert client.get("/step-up/?next=/").status_code == 200
    assert client.get("/login/enrol/").status_code == 200
    # Verified already: the second step sends the person on.
    assert client.get("/login/second-factor/?next=/profile/")["Location"] == "/profile/"
    # Nothing to show once: the recovery codes page and the passkey landing go to the profile.
    assert client.get("/login/recovery-codes/")["Location"] == "/profile/"
    assert client.get("/login/enrol/passkey/")["Location"] == "/profile/"


@pytest.mark.parametrize("role", ROLE_KEYS)
def test_only_admins_may_open_the_reset_page(role: str) -> None:
    user = person(f"{role}-resets@example.test", role)
    client = client_signed_in(user)

    response = client.get("/second-factor-resets/")

    assert response.status_code == (200 if role == "admin" else 403)
    profile = client.get("/profile/")
    assert (b'data-testid="resets-link"' in profile.content) == (role == "admin")


def test_signed_out_people_are_sent_to_sign_in_from_every_second_factor_page() -> None:
    client = Client()
    for path in (
        "/login/second-factor/",
        "/login/enrol/",
        "/login/recovery-codes/",
        "/step-up/",
        "/second-factor-resets/",
    ):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith("/login/?next="), path


def test_the_django_admin_never_shows_an_authenticators_secret() -> None:
    root = person("root-admin@example.test", superuser=True)
    device = enrolled(root)
    client = client_signed_in(root)
    seed_forms = (device.seed.hex(), device.seed.hex().upper(), device.seed_base32())

    change = client.get(f"/admin/staff/authenticatordevice/{device.pk}/change/")
    listing = client.get("/admin/staff/authenticatordevice/")

    assert change.status_code == 200 and listing.status_code == 200
    assert device.name in listing.content.decode()
    for page in (change, listing):
        html = page.content.decode()
        assert not any(form in html for form in seed_forms)
        assert device.seed_encrypted not in html
        assert "qrcode" not in html.lower() and "otpauth" not in html
    # django-otp's own TOTP admin (plain seeds, a QR code view) is not offered at all.
    assert client.get("/admin/otp_totp/totpdevice/").status_code == 404
    assert client.get("/admin/staff/authenticatordevice/add/").status_code == 403
