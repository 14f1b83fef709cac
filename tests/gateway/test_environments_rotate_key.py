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


def test_a_pending_credential_proposal_is_applied_after_the_old_key_is_retired(
    settings, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """Issue 30 item 3: the proposal's encrypted payload moves to the new key with every other
    secret, so approving it after the old key is gone applies the new credentials."""
    from gateway.services.environment_changes import environment_change
    from staff.changes import change_approve
    from staff.models import ChangeProposal
    from staff.roles import roles_sync
    from tests.identity import stepped_up
    from tests.staff.second_factor_support import person

    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    roles_sync()
    first = person("rotate-admin-one@example.test", "admin")
    second = person("rotate-admin-two@example.test", "admin")
    environment = _environment("Pending")
    proposal = environment_change(
        environment=environment, by=stepped_up(first), password="pw-new-0005-secret"
    )
    assert proposal is not None and proposal.state == ChangeProposal.State.PENDING
    before = proposal.payload["credentials"]["password"]

    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY, OLD_KEY]
    out = StringIO()
    call_command("gateway_rotate_key", stdout=out)
    assert "staff.ChangeProposal: 1 rows, 1 secrets re-encrypted" in out.getvalue()
    assert "pw-new-0005-secret" not in out.getvalue()
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]  # the old key is retired

    proposal.refresh_from_db()
    assert proposal.payload["credentials"]["password"] != before
    with django_capture_on_commit_callbacks(execute=True):
        decided = change_approve(proposal=proposal, by=stepped_up(second))
    assert decided.state == ChangeProposal.State.APPLIED, decided.reason
    assert Environment.objects.get(pk=environment.pk).password == "pw-new-0005-secret"


def test_a_pending_alert_rule_proposal_keeps_its_webhook_url_through_a_rotation(settings) -> None:  # type: ignore[no-untyped-def]
    from staff.changes import CHANGE_KINDS
    from staff.models import ChangeProposal
    from staff.roles import roles_sync
    from tests.staff.second_factor_support import person

    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    roles_sync()
    url = "https://hooks.example.test/services/T000/B000/secret-path"
    assert CHANGE_KINDS["alerts.rule_change"].secret_keys == ("webhook_url",)
    proposal = ChangeProposal.objects.create(
        kind="alerts.rule_change",
        summary="s",
        payload={"rule": 1, "webhook_url": crypto.encrypt(url)},
        target_version="v",
        proposed_by=person("rotate-alerts@example.test", "admin"),
    )
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY, OLD_KEY]
    call_command("gateway_rotate_key", stdout=StringIO())
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]
    proposal.refresh_from_db()
    assert crypto.decrypt(proposal.payload["webhook_url"]) == url


def test_every_secret_column_of_every_app_is_declared_for_rotation() -> None:
    """A column named like a secret (`*_encrypted`) that no app declared would be left behind."""
    from django.apps import apps

    declared = {
        (entry.model, name) for entry in crypto.encrypted_fields() for name in entry.columns
    }
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if field.name.endswith("_encrypted"):
                assert (model, field.name) in declared, f"{model._meta.label}.{field.name}"


def test_a_pending_change_of_a_rule_with_a_webhook_is_applied_after_the_old_key_is_retired(
    settings, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """The rule's own webhook URL is re-encrypted too: "changed since proposed" reads the URL,
    not its ciphertext, so the rotation alone does not fail the proposal."""
    from alerts.models import Severity
    from alerts.rule_changes import rule_change_propose
    from alerts.services import rule_create
    from staff.changes import change_approve
    from staff.models import ChangeProposal
    from staff.roles import roles_sync
    from tests.identity import stepped_up
    from tests.staff.second_factor_support import person

    settings.PAYOPS_ENCRYPTION_KEYS = [OLD_KEY]
    settings.PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS = True  # no name lookups in this test
    roles_sync()
    first = person("rotate-rule-one@example.test", "admin")
    second = person("rotate-rule-two@example.test", "admin")
    rule = rule_create(
        by=None,
        name="Payouts failed",
        kind="payout_failed",
        thresholds={},
        environment=None,
        webhook_url="https://hooks.example.test/services/T1/B1/secret",
    )
    proposal = rule_change_propose(
        rule=rule,
        by=stepped_up(first),
        name=rule.name,
        thresholds=dict(rule.thresholds),
        environment=None,
        severity=Severity.CRITICAL,
    )
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY, OLD_KEY]
    call_command("gateway_rotate_key", stdout=StringIO())
    settings.PAYOPS_ENCRYPTION_KEYS = [NEW_KEY]

    with django_capture_on_commit_callbacks(execute=True):
        decided = change_approve(proposal=proposal, by=stepped_up(second))
    assert decided.state == ChangeProposal.State.APPLIED, decided.reason
