"""The emulator's NinjaAPIs: production at the root, sandbox under /sandbox, and control."""

from __future__ import annotations

from collections.abc import Callable

from ninja import NinjaAPI, Router

from emulator.errors import install_handlers
from emulator.models import Environment
from emulator.routers.auth import auth_router
from emulator.routers.control import control_router
from emulator.routers.payouts import payouts_router
from emulator.routers.quotations import quotations_router
from emulator.routers.recipients import recipients_router
from emulator.routers.scenarios import scenario_control_router
from emulator.routers.users import users_router
from emulator.routers.verification import verification_router
from emulator.routers.virtual_accounts import payout_preview_router, virtual_accounts_router
from emulator.routers.webhook_registration import webhooks_router

# (prefix, factory(environment) -> Router). A factory is called once per environment, because a
# Router is attached to one API. Routers other than /auth use `auth=emulator.auth.token_auth(env)`.
ROUTER_FACTORIES: list[tuple[str, Callable[[str], Router]]] = [
    ("auth", auth_router),
    ("v1/quotations", quotations_router),
    ("v1/users", users_router),
    ("v1/virtual-accounts", virtual_accounts_router),
    ("v1/recipients", recipients_router),
    ("v1/payouts", payouts_router),
    ("payout", payout_preview_router),
    ("verification", verification_router),
    ("webhooks", webhooks_router),
]

# (prefix under /_control/, factory() -> Router). Every control router is guarded by the
# X-Emulator-Token header (emulator.routers.control.ControlTokenAuth, set on the API itself).
CONTROL_ROUTER_FACTORIES: list[tuple[str, Callable[[], Router]]] = [
    ("", control_router),
    ("", scenario_control_router),
]


def build_api(environment: str) -> NinjaAPI:
    api = NinjaAPI(
        title=f"Upstream emulator ({environment})",
        version="1",
        urls_namespace=f"emulator-{environment}",
        docs_url="/docs",
    )
    install_handlers(api)
    for prefix, factory in ROUTER_FACTORIES:
        api.add_router(prefix, factory(environment))
    return api


def build_control_api() -> NinjaAPI:
    from emulator.routers.control import ControlTokenAuth

    api = NinjaAPI(
        title="Upstream emulator control",
        version="1",
        urls_namespace="emulator-control",
        auth=ControlTokenAuth(),
        docs_url=None,
    )
    install_handlers(api)
    for prefix, factory in CONTROL_ROUTER_FACTORIES:
        api.add_router(prefix, factory())
    return api


production_api = build_api(Environment.PRODUCTION)
sandbox_api = build_api(Environment.SANDBOX)
control_api = build_control_api()
