"""Which project app may import which: staff at the bottom, console on it, gateway on both."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Guests (the emulator, dev-only apps) have their own rule: no product module imports them.
GUESTS = {"emulator", "sandbox"}
PRODUCT_APPS = sorted(
    path.parent.name
    for path in ROOT.glob("*/apps.py")
    if path.parent.name not in GUESTS and path.parent.name != "tests"
)
# Every project app an app may import; apps not listed here are only held to "no cycles".
ALLOWED = {
    "staff": set(),  # staff users, roles, sign-in, audit trail, the redaction policy
    "console": {"staff"},  # the shell: it shows what staff may see
    "gateway": {"staff", "console"},  # adds its check, panel, schedule and steps to the console
}


def imported_apps(source: str, apps: set[str]) -> set[str]:
    """The project apps a module's source imports, wherever the import stands (even in a def)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {name.split(".")[0] for name in names} & apps
    return found


def app_imports(app: str) -> dict[str, set[str]]:
    """Each other project app `app` imports, with the modules that import it."""
    others = set(PRODUCT_APPS) - {app}
    by_target: dict[str, set[str]] = {}
    for module in (ROOT / app).rglob("*.py"):
        for target in imported_apps(module.read_text(), others):
            by_target.setdefault(target, set()).add(str(module.relative_to(ROOT)))
    return by_target


def test_the_detector_sees_every_import_form() -> None:
    apps = {"staff", "console"}
    assert imported_apps("import staff", apps) == {"staff"}
    assert imported_apps("import staff.roles as r", apps) == {"staff"}
    assert imported_apps("from console.health import register_check", apps) == {"console"}
    assert imported_apps("def f():\n    from staff import roles", apps) == {"staff"}
    assert imported_apps("from . import views\nimport staffing", apps) == set()


def test_the_apps_of_the_rule_exist() -> None:
    assert set(ALLOWED) <= set(PRODUCT_APPS)


def test_each_app_imports_only_the_apps_below_it() -> None:
    breaches = {
        (app, target): sorted(modules)
        for app, allowed in ALLOWED.items()
        for target, modules in app_imports(app).items()
        if target not in allowed
    }
    assert breaches == {}


def test_no_two_product_apps_import_each_other() -> None:
    graph = {app: set(app_imports(app)) for app in PRODUCT_APPS}
    cycles = sorted(
        (app, other) for app in graph for other in graph[app] if app < other and app in graph[other]
    )
    assert cycles == []
