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
_BASE = {"staff", "console", "gateway"}
ALLOWED = {
    "staff": set(),  # staff users, roles, sign-in, audit trail, the redaction policy
    "console": {"staff"},  # the shell: it shows what staff may see
    "gateway": {"staff", "console"},  # adds its check, panel, schedule and steps to the console
    # The domain apps build on each other in one order (docs/architecture.md, "Apps"); webhooks
    # reaches the apps above it only through the handlers, mirrors and link targets they register.
    "webhooks": _BASE,
    "quotes": _BASE | {"webhooks"},  # registers its quotes as webhooks' link target
    "users": _BASE | {"webhooks"},
    "accounts": _BASE | {"webhooks", "users"},
    "payouts": _BASE | {"webhooks", "users", "accounts", "quotes"},
    "books": _BASE | {"webhooks", "users", "accounts", "quotes", "payouts"},
    "analytics": _BASE | {"webhooks", "users", "accounts", "quotes", "payouts", "books"},
    # Alerts read what the others keep (their selectors) and tell people; nothing imports them.
    "alerts": _BASE | {"webhooks", "users", "accounts", "quotes", "payouts", "books"},
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
    assert set(ALLOWED) == set(PRODUCT_APPS)  # every product app has its rule


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


# Hidden seams: an app reached through a string is an import no reader or tool can follow.
DYNAMIC_IMPORTS = {"import_module", "import_string", "__import__"}
# A model reached by its app label ("payouts", "Payout") is an import by another name.
MODEL_BY_LABEL = {"get_model"}
# Calls that take a task's function: it is passed itself (django-q2 stores the path it derives).
TASK_CALLS = {"async_task", "schedule", "register_schedule"}
# Only where a dotted string is the point: settings and URLconfs name modules by string.
STRING_SEAMS_ALLOWED = {"config/settings", "config/asgi.py", "config/wsgi.py"}


def hidden_seams(source: str) -> list[str]:
    """Dynamic imports, models looked up by app label, and task calls given a dotted path."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name in DYNAMIC_IMPORTS or name in MODEL_BY_LABEL:
            found.append(f"{name}() at line {node.lineno}")
        elif name in TASK_CALLS:
            # register_schedule(name, func, ...) takes the function second.
            position = 1 if name == "register_schedule" else 0
            if len(node.args) > position:
                arg = node.args[position]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append(f"{name}({arg.value!r}) at line {node.lineno}")
    return found


def test_the_seam_detector_sees_strings_and_dynamic_imports() -> None:
    assert hidden_seams("importlib.import_module('webhooks.services')")
    assert hidden_seams("from x import import_string\nimport_string('a.b')")
    assert hidden_seams("async_task('payouts.tasks.payout_submit', 1)")
    assert hidden_seams("register_schedule('n', 'gateway.tasks.refresh', minutes=1)")
    assert hidden_seams("apps.get_model('payouts', 'Payout')")
    assert hidden_seams("from django.apps import apps\napps.get_model('payouts.Payout')")
    assert hidden_seams("get_model(*LOCAL_MODELS['payout'])")
    assert not hidden_seams("apps.get_models()")  # every model, none named by a string
    assert not hidden_seams("async_task(payout_submit, 1)")
    assert not hidden_seams("register_schedule('gateway.refresh', refresh, minutes=1)")


def test_no_app_reaches_another_through_a_string() -> None:
    modules = [
        path
        for app in [*PRODUCT_APPS, "config"]
        for path in (ROOT / app).rglob("*.py")
        if not any(str(path.relative_to(ROOT)).startswith(a) for a in STRING_SEAMS_ALLOWED)
        and "migrations" not in path.parts
    ]
    assert len(modules) > 100  # the walk really sees the product
    offenders = {
        str(path.relative_to(ROOT)): seams
        for path in modules
        if (seams := hidden_seams(path.read_text()))
    }
    assert offenders == {}
