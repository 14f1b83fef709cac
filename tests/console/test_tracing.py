"""OpenTelemetry tracing (console.tracing): off, nothing is imported; on, one trace links a
request, its upstream calls and the tasks it queues, each span carrying the request id."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import AsyncClient
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from console import tracing
from console.middleware import request_id_use
from gateway.models import Environment
from gateway.services.environments import environment_switch
from staff.models import StaffUser
from tests.finance import make_staff
from tests.gateway.conftest import _fresh_shared_state as _fresh_shared_state
from tests.gateway.conftest import live_emulator as live_emulator
from tests.gateway.conftest import sandbox as sandbox
from tests.identity import client_signed_in

REQUEST_ID = "trace-test-request-0001"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.tracing_start(span_processor=SimpleSpanProcessor(exporter), set_global=False)
    try:
        yield exporter
    finally:
        tracing.tracing_stop()


def _parent_chain(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[ReadableSpan]:
    chain = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        chain.append(span)
    return chain


def _request_id(span: ReadableSpan) -> Any:
    return (span.attributes or {}).get(tracing.REQUEST_ID_ATTRIBUTE)


@pytest.mark.django_db(transaction=True)
def test_a_request_and_its_upstream_calls_are_one_trace_carrying_the_request_id(
    sandbox: Environment, spans: InMemorySpanExporter
) -> None:
    maker: StaffUser = make_staff("finance_maker")
    environment_switch(user=maker, environment=sandbox)
    # Through the ASGI handler, as uvicorn serves it in production.
    client = AsyncClient()
    client.cookies = client_signed_in(maker).cookies
    spans.clear()  # only what the request does

    response = async_to_sync(client.post)(
        "/api/v1/quotes",
        {"quote_currency": "MXN", "amount": "1000"},
        content_type="application/json",
        headers={"X-Request-ID": REQUEST_ID},
    )

    assert response.status_code == 201, response.content
    finished = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}
    [server] = [s for s in finished if s.kind == trace.SpanKind.SERVER]
    assert _request_id(server) == REQUEST_ID
    upstream = [s for s in finished if s.kind == trace.SpanKind.CLIENT]
    assert len(upstream) >= 1  # the quotation (and /auth when no token was held yet)
    for call in upstream:
        assert call.context.trace_id == server.context.trace_id
        assert server in _parent_chain(call, by_id)
        assert _request_id(call) == REQUEST_ID


@pytest.mark.django_db(transaction=True)
def test_a_queued_task_is_a_child_of_its_queuer_and_its_upstream_calls_of_it(
    sandbox: Environment, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django_q.conf import Conf
    from django_q.tasks import async_task

    from gateway.tasks import refresh_upstream_tokens

    monkeypatch.setattr(Conf, "SYNC", True)  # the task runs inline, as a worker would
    tracer = trace.get_tracer("test", tracer_provider=tracing._state["provider"])
    spans.clear()
    request_id_use(REQUEST_ID)
    try:
        with tracer.start_as_current_span("queuer") as queuer:
            async_task(refresh_upstream_tokens)
    finally:
        request_id_use("")

    finished = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}
    [task] = [s for s in finished if s.name.startswith("task ")]
    assert task.kind == trace.SpanKind.CONSUMER
    assert task.parent is not None and task.parent.span_id == queuer.get_span_context().span_id
    assert _request_id(task) == REQUEST_ID
    assert task.status.status_code != trace.StatusCode.ERROR  # it succeeded
    upstream = [s for s in finished if s.kind == trace.SpanKind.CLIENT]
    assert upstream  # the token refresh's /auth
    for call in upstream:
        assert task in _parent_chain(call, by_id)
        assert _request_id(call) == REQUEST_ID


PROBE = """
import sys
import django
django.setup()
from django.conf import settings
import config.urls  # every app's views and routers, as a web process loads them
loaded = sorted({m.split(".")[1] for m in sys.modules if m.startswith("opentelemetry.")})
middleware = [m for m in settings.MIDDLEWARE if "opentelemetry" in m]
print(",".join(loaded) or "-", len(middleware))
"""


def _probe(**environment: str) -> str:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "PYTHONPATH": str(settings.BASE_DIR),
        **environment,
    }
    env.pop("PAYOPS_OTEL_ENABLED", None)
    env.update(environment)
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def test_off_by_default_nothing_of_opentelemetry_is_imported() -> None:
    assert _probe() == "- 0"


def test_on_a_process_instruments_itself_as_it_starts() -> None:
    loaded, middleware = _probe(
        PAYOPS_OTEL_ENABLED="true",
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",  # nothing is exported in this probe
    ).split()
    assert {"instrumentation", "sdk", "exporter"} <= set(loaded.split(","))
    assert middleware == "1"
