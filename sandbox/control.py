"""A typed client of the emulator's control calls (decisions.md section 6), for sandbox-only views.

It reads EMULATOR_URL and EMULATOR_CONTROL_TOKEN from settings, which only the local and test
settings define (this app is never installed in production). It speaks HTTP to the emulator and
nothing else: the back office never reads or writes the emulator's tables (ADR 0002).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
from django.conf import settings

TIMEOUT = httpx.Timeout(10.0)


class EmulatorControlError(RuntimeError):
    """The emulator refused a control call (status and its JSON body kept), or did not answer."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass(frozen=True)
class IssuedClient:
    """A new API client of the emulator; the password and API key are shown only this once."""

    client_id: str
    password: str
    api_key: str


@dataclass(frozen=True)
class ClockReading:
    now: str  # ISO 8601, UTC, milliseconds (the emulator's own clock)
    offset_seconds: float


class EmulatorControl:
    """One emulator's /_control/ calls. `transport` lets a caller mount an in-process emulator."""

    def __init__(
        self, base_url: str, token: str, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(
            base_url=f"{self.base_url}/_control",
            headers={"X-Emulator-Token": token},
            timeout=TIMEOUT,
            transport=transport,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> EmulatorControl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise EmulatorControlError(
                f"the emulator at {self.base_url} did not answer {method} /_control{path}: "
                f"{type(exc).__name__}"
            ) from exc
        try:
            body = response.json()
        except ValueError:
            body = response.text
        if response.status_code >= 400:
            message = body.get("message") if isinstance(body, dict) else None
            raise EmulatorControlError(
                f"{method} /_control{path}: HTTP {response.status_code} {message or ''}".strip(),
                status=response.status_code,
                body=body,
            )
        return body

    # --- clients, clock, faults ---

    def create_client(
        self,
        name: str,
        *,
        rate_per_second: int | None = None,
        max_concurrent: int | None = None,
        weekly_quota: int | None = None,
    ) -> IssuedClient:
        body = {
            "name": name,
            "rate_per_second": rate_per_second,
            "max_concurrent": max_concurrent,
            "weekly_quota": weekly_quota,
        }
        data = self._call("POST", "/clients", json={k: v for k, v in body.items() if v is not None})
        return IssuedClient(
            client_id=str(data["client_id"]),
            password=str(data["password"]),
            api_key=str(data["api_key"]),
        )

    def clock(self) -> ClockReading:
        data = self._call("GET", "/clock")
        return ClockReading(now=data["now"], offset_seconds=float(data["offset_seconds"]))

    def advance_clock(self, seconds: float) -> ClockReading:
        data = self._call("POST", "/clock", json={"advance_seconds": seconds})
        return ClockReading(now=data["now"], offset_seconds=float(data["offset_seconds"]))

    def faults(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/faults")
        return result

    def set_faults(
        self,
        *,
        latency_ms: int | None = None,
        error_rate: float | None = None,
        rate_429: float | None = None,
        drop_webhooks: float | None = None,
        drop_response_next: int | None = None,
    ) -> dict[str, Any]:
        values = {
            "latency_ms": latency_ms,
            "error_rate": error_rate,
            "rate_429": rate_429,
            "drop_webhooks": drop_webhooks,
            "drop_response_next": drop_response_next,
        }
        result: dict[str, Any] = self._call(
            "POST", "/faults", json={k: v for k, v in values.items() if v is not None}
        )
        return result

    def clear_faults(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("DELETE", "/faults")
        return result

    # --- the domain: mailbox, deposits, decisions, tick, webhooks, crypto deposits, events ---

    def mailbox(self, email: str) -> list[dict[str, Any]]:
        """Messages sent to `email` (OTP codes), newest first."""
        messages: list[dict[str, Any]] = self._call("GET", "/mailbox", params={"email": email})[
            "messages"
        ]
        return messages

    def deposit(self, *, virtual_account_id: str, amount: Decimal) -> dict[str, Any]:
        """A simulated incoming deposit to a virtual account (with its event)."""
        body = {"virtual_account_id": virtual_account_id, "amount": str(amount)}
        data: dict[str, Any] = self._call("POST", "/deposits", json=body)["data"]
        return data

    def set_account_status(self, *, virtual_account_id: str, status: str) -> dict[str, Any]:
        data: dict[str, Any] = self._call(
            "POST", f"/virtual-accounts/{virtual_account_id}/status", json={"status": status}
        )["data"]
        return data

    def decide_user(
        self, *, user_id: str, accept: bool, reasons: list[str] | None = None
    ) -> dict[str, Any]:
        """Accepts or rejects a user waiting for a KYC decision (a `+review` user)."""
        body: dict[str, Any] = {"accept": accept}
        if reasons:
            body["reasons"] = reasons
        data: dict[str, Any] = self._call("POST", f"/users/{user_id}/decision", json=body)["data"]
        return data

    def tick(self) -> dict[str, int]:
        """Runs every due state transition now; the counts of what moved."""
        result: dict[str, int] = self._call("POST", "/tick")
        return result

    def flush_webhooks(self) -> int:
        """Delivers every queued webhook now, retries included; how many attempts were made."""
        return int(self._call("POST", "/webhooks/flush")["attempted"])

    def deliveries(self, *, event_id: str = "", client_id: str = "") -> list[dict[str, Any]]:
        params = {k: v for k, v in {"event_id": event_id, "client_id": client_id}.items() if v}
        log: list[dict[str, Any]] = self._call("GET", "/webhooks/deliveries", params=params)[
            "deliveries"
        ]
        return log

    def payout_deposit(self, *, payout_id: str, amount: Decimal) -> dict[str, Any]:
        """The stablecoin deposit of a crypto payout arrives."""
        result: dict[str, Any] = self._call(
            "POST", f"/payouts/{payout_id}/deposit", json={"amount": str(amount)}
        )
        return result

    def emit_event(
        self,
        *,
        client_id: str,
        event: str,
        data: dict[str, Any],
        environment: str = "sandbox",
    ) -> dict[str, Any]:
        """Signs and queues an event no API call produces (card_payment, barcode_generated)."""
        body = {"client_id": client_id, "event": event, "data": data, "environment": environment}
        result: dict[str, Any] = self._call("POST", "/events", json=body)
        return result


def emulator_control(*, transport: httpx.BaseTransport | None = None) -> EmulatorControl:
    """The control client of the emulator these settings name (EMULATOR_URL)."""
    return EmulatorControl(
        settings.EMULATOR_URL, settings.EMULATOR_CONTROL_TOKEN, transport=transport
    )
