"""manage.py gateway_rotate_key: every secret moves to the newest key, in one transaction."""

from __future__ import annotations

from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from gateway.models import Environment, EnvironmentKind
from gateway.services.environments import environment_create
from staff import crypto

pytestmark = pytest.mark.django_db

OLD_KEY = Fernet.generate_key().decode()
NEW_KEY = Fernet.generate_key().decode()
SECRETS = {
    "client_id": "client-0001-secret",
    "password": "pw-0002-secret",
    "api_key": "key-3-secret",
}


def _environment(name: str) -> Environment:
    environment = environment_create(
        by=None,
        name=name,
        kind=EnvironmentKind.SANDBOX,
        base_url="https://api.example.test",
        **SECRETS,
    )
    environment.webhook_secret_encrypted = crypto.encrypt("whsec-0004-secret")
    environment.save(update_fields=["webhook_secret_encrypted"])
    return environment


def test_rotation_makes_old_data_readable_after_the_old_key_is_removed(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    first = _environment("One")
    _environment("Two")
    bare = environment_create(
        by=None, name="Three", kind="production", base_url="https://x.test", **SECRETS
    )
    Environment.objects.filter(pk=bare.pk).update(password_encrypted="")
    before = Environment.objects.get(pk=first.pk).api_key_encrypted

    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY, OLD_KEY]
    out = StringIO()
    call_command("gateway_rotate_key", stdout=out)
    output = out.getvalue()
    assert "gateway.Environment: 3 rows, 10 secrets re-encrypted" in output
    assert "Re-encrypted 10 secrets" in output
    for secret in [*SECRETS.values(), "whsec-0004-secret"]:
        assert secret not in output
    assert Environment.objects.get(pk=first.pk).api_key_encrypted != before

    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]
    for environment in Environment.objects.all():
        assert environment.client_id == SECRETS["client_id"]
        assert environment.api_key == SECRETS["api_key"]
    reloaded = Environment.objects.get(pk=first.pk)
    assert reloaded.password == SECRETS["password"]
    assert reloaded.webhook_secret == "whsec-0004-secret"
    assert Environment.objects.get(pk=bare.pk).password_encrypted == ""


def test_without_the_old_key_nothing_changes(settings) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]
    readable = _environment("Readable")
    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    _environment("Old only")
    raw_before = list(
        Environment.objects.order_by("pk").values_list("api_key_encrypted", flat=True)
    )

    # The old key was removed too early: the run must fail as a whole.
    settings.PAYOPS_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), NEW_KEY]
    with pytest.raises(CommandError, match="Nothing was changed"):
        call_command("gateway_rotate_key", stdout=StringIO())
    raw_after = list(Environment.objects.order_by("pk").values_list("api_key_encrypted", flat=True))
    assert raw_after == raw_before
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]
    assert Environment.objects.get(pk=readable.pk).api_key == SECRETS["api_key"]


def test_rotation_re_encrypts_authenticator_seeds_and_their_codes_still_verify(settings) -> None:  # type: ignore[no-untyped-def]
    from staff.models import AuthenticatorDevice
    from tests.identity import enrolled
    from tests.staff.second_factor_support import code_now, person

    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    device = enrolled(person("rotated-seed@example.test", "finance_approver"))
    seed = device.seed
    before = device.seed_encrypted

    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY, OLD_KEY]
    out = StringIO()
    call_command("gateway_rotate_key", stdout=out)
    assert "staff.AuthenticatorDevice: 1 rows, 1 secrets re-encrypted" in out.getvalue()
    assert seed.hex() not in out.getvalue()

    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]
    device = AuthenticatorDevice.objects.get(pk=device.pk)
    assert device.seed_encrypted != before
    assert device.seed == seed
    assert device.verify_token(code_now(device))
