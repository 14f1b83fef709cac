"""Production settings, loaded for real in a child process: no demo staff, secure cookies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json
from django.conf import settings
import django
django.setup()
print(json.dumps({
    "seed": settings.PAYOPS_SEED_DEMO_STAFF,
    "debug": settings.DEBUG,
    "session_secure": settings.SESSION_COOKIE_SECURE,
    "session_httponly": settings.SESSION_COOKIE_HTTPONLY,
    "csrf_secure": settings.CSRF_COOKIE_SECURE,
    "samesite": settings.SESSION_COOKIE_SAMESITE,
    "ssl_redirect": settings.SECURE_SSL_REDIRECT,
    "hsts": settings.SECURE_HSTS_SECONDS,
}))
"""


def load_production(probe: str = PROBE, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "x" * 50,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/payops_f1_prodcheck",
        "REDIS_URL": "redis://127.0.0.1:6379/3",
        "DJANGO_ALLOWED_HOSTS": "payops.example.com",
        "PAYOPS_ENCRYPTION_KEYS": "dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE=",
        "PAYOPS_S3_BUCKET": "payops-documents",
        "EMULATOR_CONTROL_TOKEN": "prod-check-token",
        **extra,
    }
    return subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_production_never_seeds_demo_staff_and_uses_secure_cookies() -> None:
    result = load_production()
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values == {
        "seed": False,
        "debug": False,
        "session_secure": True,
        "session_httponly": True,
        "csrf_secure": True,
        "samesite": "Lax",
        "ssl_redirect": True,
        "hsts": 31536000,
    }


SECOND_FACTOR_PROBE = """
import json
import django
django.setup()
from django.conf import settings
from staff.models import StaffUser
from staff.second_factor.demo import demo_code_hint, demo_codes
print(json.dumps({
    "hint": demo_code_hint(StaffUser(email="approver@payops.local")),
    "codes": demo_codes(),
    "rp_id": settings.OTP_WEBAUTHN_RP_ID,
    "origins": settings.OTP_WEBAUTHN_ALLOWED_ORIGINS,
    "passwordless": settings.OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN,
}))
"""


def test_production_never_shows_a_demo_code_and_binds_passkeys_to_its_host() -> None:
    result = load_production(SECOND_FACTOR_PROBE)
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values == {
        "hint": None,
        "codes": {},
        "rp_id": "payops.example.com",
        "origins": ["https://payops.example.com"],
        "passwordless": False,
    }
