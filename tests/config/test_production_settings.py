"""Production settings refuse to start without their secrets, in one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = {
    "DJANGO_SECRET_KEY": "a-production-secret-for-this-test-only-0123456789",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/payops_f2_never_used",
    "REDIS_URL": "redis://127.0.0.1:6379/4",
    "DJANGO_ALLOWED_HOSTS": "payops.example.com",
    "PAYOPS_ENCRYPTION_KEYS": "dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE=",
    "PAYOPS_S3_BUCKET": "payops-documents",
}


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_production_refuses_to_start_without_a_required_variable(missing: str) -> None:
    # An empty value wins over a developer's .env file (read without overwriting).
    completed = _manage({**REQUIRED, missing: ""}, "check")

    assert completed.returncode == 2
    assert f"{missing} is not set" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1


def test_production_starts_with_every_required_variable() -> None:
    completed = _manage(REQUIRED, "check", "--deploy", "--fail-level", "ERROR")

    assert completed.returncode == 0, completed.stderr


def test_an_unreachable_database_gives_one_clear_message() -> None:
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:1/payops_nowhere",
        "DATABASE_POOL_TIMEOUT": "1",
    }
    completed = _manage(env, "migrate", "--check")

    assert completed.returncode == 3, completed.stderr
    assert "PayOps cannot reach its database:" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_production_keeps_files_in_the_configured_bucket_not_on_disk() -> None:
    script = (
        "from django.conf import settings;"
        "from payouts.models import PayoutDocument;"
        "s = PayoutDocument._meta.get_field('file').storage; bucket = s.bucket_name;"
        "print(type(getattr(s, '_wrapped', s)).__name__, bucket, s.endpoint_url,"
        " s.region_name, s.location,"
        " s.querystring_auth, s.querystring_expire, s.file_overwrite, s.default_acl,"
        " settings.CACHES['default']['BACKEND'])"
    )
    env = {
        **REQUIRED,
        "PAYOPS_S3_ENDPOINT_URL": "http://127.0.0.1:9000",
        "PAYOPS_S3_REGION": "eu-west-1",
        "PAYOPS_S3_PREFIX": "payops",
    }
    completed = _manage(env, "shell", "-c", script)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1].split() == [
        "S3Storage",
        "payops-documents",
        "http://127.0.0.1:9000",
        "eu-west-1",
        "payops",
        "True",
        "60",
        "False",
        "None",
        "django.core.cache.backends.redis.RedisCache",
    ]
