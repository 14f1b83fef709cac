"""The emulator is a guest: no product module imports it (or sandbox); it imports no product app."""

from __future__ import annotations

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
# Dev-only code: installed by the local/test (and, for the emulator, emulator) settings only.
GUESTS = ("emulator", "sandbox")
NOT_PRODUCT = ("tests", "bench", "docs", "static", "templates", "var", "requirements")


def _top_level_packages() -> set[str]:
    return {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if not path.parent.name.startswith(".") and path.parent.name not in NOT_PRODUCT
    }


def imported_top_levels(tree: ast.AST) -> set[str]:
    """First components of every absolute import, `import x`, `from x import y`, `__import__`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
            in ("__import__", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value).split(".")[0])
    return names


def _modules(top: str) -> list[Path]:
    return sorted((ROOT / top).rglob("*.py"))


def test_the_detector_sees_every_import_form() -> None:
    for source in (
        "import emulator",
        "import emulator.models as m",
        "from emulator.clients import client_create",
        "def f():\n    from sandbox import control",
        "__import__('emulator.asgi')",
        "importlib.import_module('sandbox.control')",
    ):
        assert imported_top_levels(ast.parse(source)) & set(GUESTS), source
    assert not imported_top_levels(ast.parse("MIDDLEWARE = ['emulator.middleware.X']"))
    assert not imported_top_levels(ast.parse("from .models import ApiClient"))


def test_no_product_module_imports_the_emulator_or_sandbox() -> None:
    product = _top_level_packages() - set(GUESTS)
    assert {"config", "staff", "gateway", "payouts"} <= product  # the walk really sees the product
    offenders = [
        f"{path.relative_to(ROOT)} imports {sorted(found)}"
        for top in [*sorted(product), "scripts"]
        for path in _modules(top)
        if (found := imported_top_levels(ast.parse(path.read_text(), str(path))) & set(GUESTS))
    ]
    assert offenders == [], "product code must reach the emulator over HTTP only (ADR 0002)"


def test_the_emulator_imports_no_product_app() -> None:
    product = _top_level_packages() - {"emulator"}
    scanned = _modules("emulator")
    assert len(scanned) > 30
    offenders = [
        f"{path.relative_to(ROOT)} imports {sorted(found)}"
        for path in scanned
        if (found := imported_top_levels(ast.parse(path.read_text(), str(path))) & product)
    ]
    assert offenders == [], "the emulator stands in for a third party: it knows none of our apps"


def test_production_settings_install_no_guest() -> None:
    from config.settings import base

    assert not set(GUESTS) & set(base.INSTALLED_APPS)
    assert not [m for m in base.MIDDLEWARE if m.split(".")[0] in GUESTS]


def test_production_showmigrations_lists_no_emulator_app(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "a-production-secret-for-this-test-only-0123456789",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'production.sqlite3'}",
        "REDIS_URL": "redis://127.0.0.1:6379/1",
        "DJANGO_ALLOWED_HOSTS": "payops.example.com",
        "PAYOPS_ENCRYPTION_KEYS": "dGVzdC1lbmNyeXB0aW9uLWtleS1ub3Qtc2VjcmV0ISE=",
        "PAYOPS_S3_BUCKET": "payops-documents",
    }
    completed = subprocess.run(
        [sys.executable, "manage.py", "showmigrations"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    apps = {line for line in completed.stdout.splitlines() if line and not line.startswith(" ")}
    assert {"gateway", "staff"} <= apps  # the listing is real
    assert not apps & set(GUESTS), apps
