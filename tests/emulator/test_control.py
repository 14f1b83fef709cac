"""The control surface: token, clients, clock; and manage.py emulator_client."""

import io
import json
import subprocess
import sys

import pytest
from django.contrib.auth.hashers import check_password
from django.core.management import call_command
from django.test import override_settings

from emulator import clock
from emulator.clients import api_key_digest
from emulator.models import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/_control/clients"),
        ("post", "/_control/clock"),
        ("get", "/_control/faults"),
        ("post", "/_control/faults"),
        ("delete", "/_control/faults"),
    ],
)
def test_control_needs_the_token(http, method, path):
    for headers in ({}, {"X-Emulator-Token": "wrong"}):
        kwargs = {"json": {"name": "x"}} if method == "post" else {}
        response = getattr(http, method)(path, headers=headers, **kwargs)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"
    assert ApiClient.objects.count() == 0


def test_empty_control_token_refuses_everything(http):
    with override_settings(EMULATOR_CONTROL_TOKEN=""):
        response = http.get("/_control/faults", headers={"X-Emulator-Token": ""})
    assert response.status_code == 401


def test_create_client_and_use_it_in_both_environments(http, control):
    created = control.post("/_control/clients", json={"name": "Acme"})
    assert created.status_code == 201
    creds = created.json()
    assert set(creds) == {"client_id", "password", "api_key"}
    stored = ApiClient.objects.get(client_id=creds["client_id"])
    assert stored.api_key_digest == api_key_digest(creds["api_key"])
    assert creds["api_key"] not in stored.api_key_digest
    assert creds["password"] not in stored.password
    for prefix in ("", "/sandbox"):
        auth = http.post(
            prefix + "/auth",
            json={"client_id": creds["client_id"], "password": creds["password"]},
            headers={"x-api-key": creds["api_key"]},
        )
        assert auth.status_code == 200


def test_clock_advances_and_never_goes_back(control):
    before = clock.now()
    response = control.post("/_control/clock", json={"advance_seconds": 3600})
    assert response.status_code == 200
    assert response.json()["offset_seconds"] == pytest.approx(3600)
    assert (clock.now() - before).total_seconds() >= 3600
    assert control.post("/_control/clock", json={"advance_seconds": -5}).status_code == 400
    with pytest.raises(ValueError):
        clock.advance(-1)
    assert control.get("/_control/clock").json()["offset_seconds"] == pytest.approx(3600)


def test_management_command_prints_json_credentials():
    out = io.StringIO()
    call_command("emulator_client", "create", "--name", "CLI", "--json", stdout=out)
    creds = json.loads(out.getvalue())
    client = ApiClient.objects.get(client_id=creds["client_id"])
    assert client.name == "CLI"
    assert check_password(creds["password"], client.password)
    assert client.api_key_digest == api_key_digest(creds["api_key"])


def test_emulator_is_not_installed_in_production_and_needs_a_token_on_its_own(tmp_path):
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x" * 50,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/payops_e1_never_used",
        "REDIS_URL": "redis://127.0.0.1:6379/1",
        "DJANGO_ALLOWED_HOSTS": "example.org",
        "PAYOPS_ENCRYPTION_KEYS": "dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE=",
        "PAYOPS_S3_BUCKET": "payops-documents",
        "EMULATOR_CONTROL_TOKEN": "",
    }

    def import_emulator() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "import emulator.asgi"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=str(__import__("django.conf").conf.settings.BASE_DIR),
        )

    refused = import_emulator()
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert "emulator: The emulator is not installed in config.settings.production" in refused.stderr

    # On its own (config.settings.emulator) it starts only with a control token.
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.emulator"
    result = import_emulator()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "emulator: The emulator refuses to start under emulator settings" in result.stderr
    assert "EMULATOR_CONTROL_TOKEN" in result.stderr
    env["EMULATOR_CONTROL_TOKEN"] = "set-in-production"
    allowed = import_emulator()
    assert allowed.returncode == 0, allowed.stderr
