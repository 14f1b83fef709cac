"""A call's fixed parts, and one attempt's bookkeeping: its slot, call-log row and failure."""

from __future__ import annotations

import json as jsonlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings

from console.middleware import current_request_id
from gateway import call_log, connections, limiter, retry_policy
from gateway.errors import UpstreamError, UpstreamTimeout, error_from_response
from gateway.limiter import Priority
from gateway.limiter.policy import Answer
from gateway.target import Target


@dataclass(frozen=True)
class Call:
    """One logical call's fixed parts: the same for each of its attempts."""

    target: Target
    operation: str
    method: str
    path: str
    json: Any
    params: Mapping[str, Any] | None
    headers: Mapping[str, str] | None
    idempotency_key: str | None
    priority: Priority
    authenticated: bool

    @property
    def url(self) -> str:
        return self.target.url(self.path)

    @property
    def content(self) -> bytes | None:
        return jsonlib.dumps(self.json).encode() if self.json is not None else None

    def record(self, attempt: int) -> call_log.CallRecord:
        """The call-log row of one attempt."""
        return call_log.CallRecord(
            environment_id=self.target.environment_id,
            operation=self.operation,
            method=self.method,
            path="/" + self.path.lstrip("/"),
            attempt=attempt,
            idempotency_key=self.idempotency_key or "",
            priority=str(self.priority),
            request_body=self.json,
        )

    def may_retry(self, failure: UpstreamError, *, attempt: int, max_attempts: int) -> bool:
        """Whether `gateway.retry_policy` lets the call be sent again after this failure."""
        return retry_policy.may_retry(
            operation=self.operation,
            method=self.method,
            keyed=self.idempotency_key is not None,
            failure=failure,
            attempt=attempt,
            max_attempts=max_attempts,
        )

    def send_headers(self, token: str) -> dict[str, str]:
        """Version, API key, token, content type and idempotency key; the caller's own last."""
        sent = {"X-Api-Version": settings.GATEWAY_API_VERSION, "x-api-key": self.target.api_key}
        if token:
            sent["Authorization"] = f"Bearer {token}"
        if self.json is not None:
            sent["Content-Type"] = "application/json"
        if self.idempotency_key:
            sent["idempotency-key"] = self.idempotency_key
        if request_id := current_request_id():
            sent["X-Request-ID"] = request_id  # the upstream's support can find our call
        sent.update(self.headers or {})
        return sent


@dataclass
class Attempt:
    """One attempt's bookkeeping, ended once: by the caller, or after it left (a late answer)."""

    held: limiter.Slot
    row_id: int | None
    started: float

    def end(
        self, response: httpx.Response | None, error: BaseException | None
    ) -> tuple[Answer | None, int, UpstreamError | None]:
        """Free the slot (learning from the answer), complete the call-log row, name the failure."""
        duration_ms = int((time.monotonic() - self.started) * 1000)
        failure = failure_of(response, error)
        not_sent = isinstance(error, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
        answer = limiter.finish(
            self.held,
            sent=not not_sent,
            # When the answer arrived, not when this bookkeeping got the store's lock.
            ended_at=response.extensions.get(connections.ANSWERED_AT) if response else None,
            status=response.status_code if response is not None else None,
            headers=response.headers if response is not None else None,
        )
        call_log.close_row(
            self.row_id,
            status=response.status_code if response is not None else None,
            duration_ms=duration_ms,
            error_code=(failure.code or type(failure).__name__) if failure else "",
            response_body=response.text if response is not None else "",
        )
        return answer, duration_ms, failure


def failure_of(
    response: httpx.Response | None, error: BaseException | None
) -> UpstreamError | None:
    """The attempt's failure as one of the gateway's errors (None for a successful answer)."""
    if response is not None:
        if response.is_success:
            return None
        return error_from_response(
            response.status_code, response.text, retry_after=_retry_after(response.headers)
        )
    if isinstance(error, httpx.TimeoutException):
        return UpstreamTimeout("the upstream did not answer in time", code="timeout")
    # A dropped connection is like a timeout: the request may have taken effect.
    return UpstreamTimeout(
        f"the connection failed ({type(error).__name__})", code="connection_error"
    )


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
