"""Emulator fixtures: in-process and real-HTTP emulators, control, API credentials, tokens."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from emulator.clients import client_create
from emulator.limits import LIMITER, WEEKLY

CONTROL_HEADERS = {"X-Emulator-Token": settings.EMULATOR_CONTROL_TOKEN}


@dataclass(frozen=True)
class Credentials:
    client_id: str
    password: str
    api_key: str
    pk: int


def make_credentials(name: str = "tests", **limits: int | None) -> Credentials:
    issued = client_create(name=name, **limits)
    return Credentials(
        client_id=str(issued.client.client_id),
        password=issued.password,
        api_key=issued.api_key,
        pk=issued.client.pk,
    )


@pytest.fixture(autouse=True)
def _fresh_limiter() -> Iterator[None]:
    LIMITER.reset()
    WEEKLY.reset()
    yield
    LIMITER.reset()
    WEEKLY.reset()


@pytest.fixture
def emulator_app() -> object:
    from emulator.asgi import application

    return application


@pytest.fixture
async def emulator_http(emulator_app: object) -> object:
    """(a) The emulator in-process over httpx.ASGITransport (no lifespan); transactional_db."""
    transport = httpx.ASGITransport(app=emulator_app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://emulator") as client:
        yield client
    # Tests call the ORM through sync_to_async, i.e. in asgiref's shared thread: close its
    # connection (on PostgreSQL a pool slot that would keep the test database busy).
    await sync_to_async(connections.close_all)()


class LiveEmulator:
    """A real uvicorn server running the emulator in a background thread on a free port."""

    def __init__(self, app: object) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)  # type: ignore[arg-type]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the emulator did not answer /healthz within 30 s")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture(scope="session")
def live_emulator(django_db_setup: None) -> Iterator[LiveEmulator]:
    """(b) One real server for the session; its tests need transactional_db (committed data)."""
    from emulator.asgi import application

    server = LiveEmulator(application)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def live_url(live_emulator: LiveEmulator, transactional_db: None) -> str:
    return live_emulator.url


@pytest.fixture
def http(live_url: str) -> Iterator[httpx.Client]:
    """A plain client of the live emulator (no credentials)."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        yield client


@pytest.fixture
def control(live_url: str) -> Iterator[httpx.Client]:
    """(c) A client of the live emulator's /_control/ with the token."""
    with httpx.Client(base_url=live_url, headers=CONTROL_HEADERS, timeout=10) as client:
        yield client


@pytest.fixture
def api_client(transactional_db: None) -> Credentials:
    """(d) An API client with limits raised so ordinary tests never meet them."""
    return make_credentials("tests", rate_per_second=1000, max_concurrent=50)


def environment_prefix(environment: str) -> str:
    return "/sandbox" if environment == "sandbox" else ""


@pytest.fixture
def authed(http: httpx.Client, api_client: Credentials) -> Callable[..., dict[str, str]]:
    """(e) authed(environment="sandbox", credentials=api_client) -> headers with a fresh token."""

    def headers_for(
        environment: str = "sandbox", credentials: Credentials | None = None
    ) -> dict[str, str]:
        creds = credentials or api_client
        response = http.post(
            environment_prefix(environment) + "/auth",
            json={"client_id": creds.client_id, "password": creds.password},
            headers={"x-api-key": creds.api_key},
        )
        assert response.status_code == 200, response.text
        token = response.json()["data"]["access_token"]
        return {"x-api-key": creds.api_key, "Authorization": f"Bearer {token}"}

    return headers_for


# --- domain fixtures: webhook receiver, a scripted sandbox walk ---


class WebhookReceiver:
    """A tiny threaded HTTP server that records raw webhook requests and answers scripted codes."""

    def __init__(self) -> None:
        import http.server

        self.requests: list[dict[str, object]] = []
        self.statuses: list[int] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver.lock:
                    receiver.requests.append(
                        {"path": self.path, "headers": dict(self.headers.items()), "body": raw}
                    )
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    server = WebhookReceiver()
    yield server
    server.stop()


class Sandbox:
    """Drives the live emulator through its public API and control surface, like a test would."""

    def __init__(
        self, http: httpx.Client, control: httpx.Client, headers: dict[str, str], prefix: str
    ) -> None:
        self.http = http
        self.control = control
        self.headers = headers
        self.prefix = prefix

    def post(self, path: str, json: object, **headers: str) -> httpx.Response:
        return self.http.post(self.prefix + path, json=json, headers={**self.headers, **headers})

    def put(self, path: str, json: object) -> httpx.Response:
        return self.http.put(self.prefix + path, json=json, headers=self.headers)

    def get(self, path: str, **params: object) -> httpx.Response:
        return self.http.get(self.prefix + path, params=params, headers=self.headers)  # type: ignore[arg-type]

    def advance(self, seconds: float) -> None:
        assert (
            self.control.post("/_control/clock", json={"advance_seconds": seconds}).status_code
            == 200
        )

    def tick(self) -> dict[str, int]:
        response = self.control.post("/_control/tick")
        assert response.status_code == 200, response.text
        return response.json()

    def create_user(self, email: str = "ana@example.com", **extra: str) -> dict[str, object]:
        import uuid as _uuid

        body = {
            "type": "individual",
            "email": email,
            "phone_number": "+15555550100",
            "first_name": "Ana",
            "last_name": "Silva",
            "country": "US",
            **extra,
        }
        response = self.post("/v1/users", body, **{"idempotency-key": str(_uuid.uuid4())})
        assert response.status_code == 201, response.text
        return response.json()["data"]

    def active_account(self, user_id: str, mode: str = "fiat") -> dict[str, object]:
        response = self.post(
            "/v1/virtual-accounts",
            {"user_id": user_id, "type": "US_BANK", "bank": "slovak_savings_bank", "mode": mode},
        )
        assert response.status_code == 201, response.text
        self.advance(5)
        self.tick()
        account = self.get(f"/v1/virtual-accounts/{response.json()['data']['id']}").json()["data"]
        assert account["status"] == "active"
        return account

    def deposit(self, account_id: str, amount: str) -> None:
        response = self.control.post(
            "/_control/deposits", json={"virtual_account_id": account_id, "amount": amount}
        )
        assert response.status_code == 201, response.text

    def recipient(self, user_id: str, account_type: str = "WIRE") -> dict[str, object]:
        account: dict[str, str] = {
            "account_type": account_type,
            "account_number": "123456789",
            "bank_name": "First Bank",
        }
        if account_type == "WIRE":
            account["routing_number"] = "026009593"
        if account_type == "SWIFT":
            account["swift_code"] = "DEUTDEFF"
        if account_type == "SPEI":
            account["account_number"] = "012345678901234567"
        response = self.post(
            "/v1/recipients",
            {
                "user_id": user_id,
                "first_name": "Bo",
                "last_name": "Ng",
                "email": "bo@example.com",
                "address": {
                    "street_name": "1 Main St",
                    "city": "Austin",
                    "state": "TX",
                    "postal_code": "73301",
                    "country": "US",
                },
                "account": account,
            },
        )
        assert response.status_code == 201, response.text
        return response.json()["data"]

    def otp(self, email: str = "ops@example.com") -> str:
        response = self.post("/verification/send", {"email": email})
        assert response.status_code == 200, response.text
        messages = self.control.get("/_control/mailbox", params={"email": email}).json()["messages"]
        return str(messages[0]["code"])

    def payout(
        self,
        account_id: str,
        body: dict[str, object],
        otp: str | None = None,
        key: str | None = None,
    ) -> httpx.Response:
        import uuid as _uuid

        headers = {"idempotency-key": key or str(_uuid.uuid4())}
        if otp is not None:
            headers["x-validation-header"] = otp
        return self.post(f"/v1/virtual-accounts/{account_id}/payout", body, **headers)

    def funded_setup(self, balance: str = "1000.00") -> tuple[str, str]:
        """A verified user's active fiat account holding `balance`, and a WIRE recipient."""
        user = self.create_user()
        if user["verification_status"] == "not_started":  # production waits for a decision
            decision = f"/_control/users/{user['user_id']}/decision"
            assert self.control.post(decision, json={"accept": True}).status_code == 200
        account = self.active_account(str(user["user_id"]))
        if balance != "0":
            self.deposit(str(account["id"]), balance)
        recipient = self.recipient(str(user["user_id"]))
        return str(account["id"]), str(recipient["recipient_id"])

    def balance(self, account_id: str) -> str:
        response = self.get(f"/v1/virtual-accounts/{account_id}/balance")
        assert response.status_code == 200, response.text
        return str(response.json()["data"]["available_balance"])


@pytest.fixture
def sandbox(
    http: httpx.Client, control: httpx.Client, authed: Callable[..., dict[str, str]]
) -> Sandbox:
    return Sandbox(http, control, authed("sandbox"), "/sandbox")


@pytest.fixture
def production(
    http: httpx.Client, control: httpx.Client, authed: Callable[..., dict[str, str]]
) -> Sandbox:
    return Sandbox(http, control, authed("production"), "")


def business_hours_seconds(now_iso: str) -> float:
    """Seconds from the emulator's now to the next weekday noon in New York (no penalty markup)."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    now = datetime.fromisoformat(now_iso.replace("Z", "+00:00"))
    local = now.astimezone(ZoneInfo("America/New_York"))
    target = local.replace(hour=12, minute=0, second=0, microsecond=0)
    if target <= local:
        target += timedelta(days=1)
    while target.weekday() >= 5:
        target += timedelta(days=1)
    return (target - local).total_seconds()


@pytest.fixture
def business_hours(
    control: httpx.Client, sandbox: Sandbox, authed: Callable[..., dict[str, str]]
) -> None:
    """Moves the emulator's clock to a weekday noon in New York, so no penalty markup applies.

    From a Friday evening that is Monday: past the sandbox's token, so it signs in again."""
    now = control.get("/_control/clock").json()["now"]
    control.post("/_control/clock", json={"advance_seconds": business_hours_seconds(now)})
    sandbox.headers = authed("sandbox")
