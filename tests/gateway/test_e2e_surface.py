"""The gateway covers every upstream operation of the contract, and nothing else imports httpx."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import NamedTuple

from django.conf import settings

from gateway.client import Upstream
from gateway.models import Environment


class Operation(NamedTuple):
    name: str  # the call log's `operation`
    attribute: str  # where it lives on `upstream(env)`
    method: str
    path: str  # regex of the path under the API root (interface.md 4, decisions.md 2)


UUID = r"[0-9a-f-]{36}"
OPERATIONS = [
    Operation("auth", "auth.token", "POST", r"/auth"),
    Operation("quotation_create", "quotations.create", "POST", r"/v1/quotations"),
    Operation("quotation_get", "quotations.get", "GET", rf"/v1/quotations/{UUID}"),
    Operation("quotation_update", "quotations.update", "PATCH", rf"/v1/quotations/{UUID}"),
    Operation(
        "payout_preview",
        "payouts.preview",
        "POST",
        rf"(/v1/virtual-accounts/{UUID})?/payout/preview",
    ),
    Operation("otp_send", "verification.send_otp", "POST", r"/verification/send"),
    Operation(
        "payout_initiate", "payouts.initiate", "POST", rf"/v1/virtual-accounts/{UUID}/payout"
    ),
    Operation("payout_get", "payouts.get", "GET", rf"/v1/payouts/{UUID}"),
    Operation("payout_list", "payouts.list", "GET", r"/v1/payouts"),
    Operation("user_create", "users.create", "POST", r"/v1/users"),
    Operation("user_update", "users.update", "PUT", rf"/v1/users/{UUID}"),
    Operation("user_get", "users.get", "GET", rf"/v1/users/{UUID}"),
    Operation("virtual_account_create", "virtual_accounts.create", "POST", r"/v1/virtual-accounts"),
    Operation(
        "virtual_account_get", "virtual_accounts.get", "GET", rf"/v1/virtual-accounts/{UUID}"
    ),
    Operation("virtual_account_list", "virtual_accounts.list", "GET", r"/v1/virtual-accounts"),
    Operation(
        "virtual_account_balance",
        "virtual_accounts.balance",
        "GET",
        rf"/v1/virtual-accounts/{UUID}/balance",
    ),
    Operation("recipient_create", "recipients.create", "POST", r"/v1/recipients"),
    Operation("recipient_get", "recipients.get", "GET", rf"/v1/recipients/{UUID}"),
    Operation("recipient_list", "recipients.list", "GET", r"/v1/recipients"),
    Operation("webhook_register", "webhooks.register", "POST", r"/webhooks/register"),
]

# gateway/ is the one client of the upstream. The emulator is the upstream's stand-in (its webhook
# sender speaks HTTP). sandbox/ (dev-only, never installed in production) talks HTTP to the
# emulator's control surface, which is not the upstream: the rule is about the upstream.
ALLOWED_HTTPX = ("gateway", "emulator", "sandbox")
# The one product module that talks HTTP to something other than the upstream: it posts alerts to
# the webhook URL an admin gave (a chat room), never to the upstream (docs/alerts.md).
ALLOWED_HTTPX_FILES = ("alerts/delivery.py",)
NOT_PRODUCT = ("tests", "bench", ".venv", "node_modules", "var", "static")


def _resolve(client: Upstream, attribute: str) -> object:
    target: object = client
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def test_every_contract_operation_has_a_typed_gateway_method() -> None:
    client = Upstream(Environment(name="surface"))
    for operation in OPERATIONS:
        method = _resolve(client, operation.attribute)
        assert inspect.iscoroutinefunction(method), operation
        hints = inspect.get_annotations(method, eval_str=True)
        assert "return" in hints and hints["return"] is not None, operation
    # And nothing public on the client is outside the table (a new operation gets a row here).
    public = {
        f"{group}.{name}"
        for group, resource in vars(client).items()
        if not group.startswith("_") and hasattr(resource, "_call")
        for name, member in inspect.getmembers(type(resource), inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert public == {operation.attribute for operation in OPERATIONS}


def _imports_httpx(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names = [str(getattr(node.args[0], "value", ""))] if node.args else []
        else:
            continue
        if any(name.split(".")[0] == "httpx" for name in names):
            return True
    return False


def test_the_detector_sees_every_import_form() -> None:
    sources = (
        "import httpx",
        "import httpx as h",
        "from httpx import AsyncClient",
        "def f():\n    import httpx._client",
        "__import__('httpx')",
    )
    for source in sources:
        assert _imports_httpx(ast.parse(source)), source
    assert not _imports_httpx(ast.parse("LOGGING = {'httpx': {'level': 'WARNING'}}"))


def test_no_product_module_imports_httpx() -> None:
    root = Path(settings.BASE_DIR)
    offenders = []
    scanned = 0
    for path in sorted(root.rglob("*.py")):
        top = path.relative_to(root).parts[0]
        if top in NOT_PRODUCT or top in ALLOWED_HTTPX or top.startswith("."):
            continue
        if path.relative_to(root).as_posix() in ALLOWED_HTTPX_FILES:
            continue
        scanned += 1
        if _imports_httpx(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            offenders.append(str(path.relative_to(root)))
    assert scanned > 20  # the walk really saw the product (staff, config, users, payouts, ...)
    assert offenders == [], f"only gateway/ may talk HTTP to the upstream: {offenders}"


def logged_operations_match(calls: list[tuple[str, str, str]]) -> set[str]:
    """Every (operation, method, path) the call log holds matches its table row; the names seen."""
    rows = {operation.name: operation for operation in OPERATIONS}
    for name, method, path in calls:
        row = rows[name]
        assert method == row.method and re.fullmatch(row.path, path), (name, method, path)
    return {name for name, _, _ in calls}
