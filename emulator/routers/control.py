"""/_control/ for API clients, the clock and fault injection; the token guarding every call."""

from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Router, Schema, Status
from pydantic import Field

from emulator import clock, faults
from emulator.clients import client_create
from emulator.domain.formats import iso
from emulator.errors import auth_error


class ControlTokenAuth:
    """X-Emulator-Token must equal EMULATOR_CONTROL_TOKEN; an empty setting refuses every call."""

    def __call__(self, request: HttpRequest) -> bool:
        expected = str(getattr(settings, "EMULATOR_CONTROL_TOKEN", "") or "")
        given = request.headers.get("x-emulator-token", "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            raise auth_error("invalid or missing X-Emulator-Token")
        return True


class ClientIn(Schema):
    name: str = Field(min_length=1, max_length=200)
    rate_per_second: int | None = Field(default=None, ge=1)
    max_concurrent: int | None = Field(default=None, ge=1)
    weekly_quota: int | None = Field(default=None, ge=1)


class ClockIn(Schema):
    advance_seconds: float = Field(ge=0)


class FaultsIn(Schema):
    latency_ms: int | None = Field(default=None, ge=0, le=120_000)
    error_rate: float | None = Field(default=None, ge=0, le=1)
    rate_429: float | None = Field(default=None, ge=0, le=1)
    drop_webhooks: float | None = Field(default=None, ge=0, le=1)
    drop_response_next: int | None = Field(default=None, ge=0)
    drop_events_next: int | None = Field(default=None, ge=0)
    error_next: int | None = Field(default=None, ge=0)


def _clock_json() -> dict[str, Any]:
    return {"now": iso(clock.now()), "offset_seconds": clock.offset().total_seconds()}


def control_router() -> Router:
    router = Router(tags=["control"])

    @router.post("/clients", response={201: dict[str, Any]}, url_name="control-clients")
    def create_client(request: HttpRequest, payload: ClientIn) -> Status[dict[str, Any]]:
        issued = client_create(**payload.model_dump())
        return Status(201, issued.as_dict())

    @router.get("/clock", url_name="control-clock")
    def read_clock(request: HttpRequest) -> dict[str, Any]:
        return _clock_json()

    @router.post("/clock", url_name="control-clock-advance")
    def advance_clock(request: HttpRequest, payload: ClockIn) -> dict[str, Any]:
        clock.advance(payload.advance_seconds)
        return _clock_json()

    @router.get("/faults", url_name="control-faults")
    def read_faults(request: HttpRequest) -> dict[str, Any]:
        return faults.current().as_dict()

    @router.post("/faults", url_name="control-faults-set")
    def set_faults(request: HttpRequest, payload: FaultsIn) -> dict[str, Any]:
        values = {k: v for k, v in payload.model_dump().items() if v is not None}
        return faults.faults_set(**values).as_dict()

    @router.delete("/faults", url_name="control-faults-clear")
    def clear_faults(request: HttpRequest) -> dict[str, Any]:
        return faults.faults_clear().as_dict()

    return router
