"""Optional OpenTelemetry tracing (PAYOPS_OTEL_ENABLED): requests, upstream calls, tasks.

Off by default, and then nothing from `opentelemetry` is imported: the packages are the optional
extra `otel` (ADR 0028). When on (`tracing_start`, from ConsoleConfig.ready() in every web and
worker process, before the first request or task), three kinds of span share one trace:

- Django requests (opentelemetry-instrumentation-django, its middleware first in the chain;
  under ASGI it needs opentelemetry-instrumentation-asgi, or it silently traces nothing);
- the gateway's httpx requests to the upstream (opentelemetry-instrumentation-httpx, on every
  AsyncClient: the gateway's I/O loop runs each request in a copy of its caller's context, as
  `run_coroutine_threadsafe` does, so the upstream call is a child of the request or task that
  made it);
- django-q2 tasks (our own signal handlers: no maintained instrumentation exists), a child of
  the request or task that queued it, through a W3C `traceparent` carried in the task.

Each span carries the request id (`payops.request_id`, console.middleware) so a trace and the
JSON log lines of the same request find each other. Export is OTLP over HTTP, configured by the
standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...), read by the SDK.
"""

from __future__ import annotations

import logging
import os
from typing import Any

logger = logging.getLogger(__name__)

REQUEST_ID_ATTRIBUTE = "payops.request_id"
TASK_CARRIER_KEY = "otel_context"
SERVICE_NAME_DEFAULT = "payops"

# The provider and the task spans open in this process (by task id), while tracing is on.
_state: dict[str, Any] = {}


def tracing_active() -> bool:
    return "provider" in _state


def tracing_start(*, span_processor: Any = None, set_global: bool = True) -> Any:
    """
    Instrument Django, httpx and django-q2 tasks and return the TracerProvider. Spans go to an
    OTLP exporter in batches, or to `span_processor` (tests: an in-memory exporter). Idempotent.
    """
    if tracing_active():
        return _state["provider"]
    from django_q.signals import post_execute_in_worker, pre_enqueue, pre_execute
    from opentelemetry import trace
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    name = os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME_DEFAULT
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    if span_processor is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        span_processor = BatchSpanProcessor(OTLPSpanExporter())
    provider.add_span_processor(span_processor)
    if set_global:
        trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(tracer_provider=provider, response_hook=_django_response)
    HTTPXClientInstrumentor().instrument(
        tracer_provider=provider, async_request_hook=_httpx_request
    )
    _state["provider"] = provider
    _state["tracer"] = provider.get_tracer("payops.tasks")
    _state["tasks"] = {}
    pre_enqueue.connect(_task_carry, dispatch_uid="console.tracing_carry")
    pre_execute.connect(_task_begin, dispatch_uid="console.tracing_begin")
    post_execute_in_worker.connect(_task_end, dispatch_uid="console.tracing_end")
    logger.info("OpenTelemetry tracing on (service %s)", name)
    return provider


def tracing_stop() -> None:
    """Undo `tracing_start` (tests); the provider's spans are flushed."""
    if not tracing_active():
        return
    from django_q.signals import post_execute_in_worker, pre_enqueue, pre_execute
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    DjangoInstrumentor().uninstrument()
    HTTPXClientInstrumentor().uninstrument()
    pre_enqueue.disconnect(dispatch_uid="console.tracing_carry")
    pre_execute.disconnect(dispatch_uid="console.tracing_begin")
    post_execute_in_worker.disconnect(dispatch_uid="console.tracing_end")
    provider = _state.pop("provider")
    _state.clear()
    provider.force_flush()


# --- Hooks: the request id on every span ----------------------------------------------------


def _django_response(span: Any, request: Any, response: Any) -> None:
    """The request id is known only once our middleware ran: read it off the response."""
    from console.middleware import REQUEST_ID_HEADER

    request_id = response.get(REQUEST_ID_HEADER, "") if response is not None else ""
    if request_id and span.is_recording():
        span.set_attribute(REQUEST_ID_ATTRIBUTE, request_id)


async def _httpx_request(span: Any, request: Any) -> None:
    """The gateway sends the request id upstream (X-Request-ID): the same value on the span."""
    from console.middleware import REQUEST_ID_HEADER

    request_id = request.headers.get(REQUEST_ID_HEADER, "")
    if request_id and span.is_recording():
        span.set_attribute(REQUEST_ID_ATTRIBUTE, request_id)


# --- django-q2 tasks --------------------------------------------------------------------------


def _task_carry(sender: Any, task: dict[str, Any], **kwargs: Any) -> None:
    """pre_enqueue: the current trace context travels in the task (a W3C traceparent)."""
    from opentelemetry.propagate import inject

    carrier: dict[str, str] = {}
    inject(carrier)
    if carrier:
        task[TASK_CARRIER_KEY] = carrier


def _task_begin(sender: Any, func: Any, task: dict[str, Any], **kwargs: Any) -> None:
    """pre_execute: a span for the task, child of its queuer's, current while it runs."""
    from opentelemetry import context, trace
    from opentelemetry.propagate import extract

    parent = extract(task.get(TASK_CARRIER_KEY) or {})
    name = getattr(func, "__qualname__", "") or str(task.get("func", "task"))
    attributes = {"payops.task.name": name, "payops.task.id": str(task.get("id", ""))}
    if task.get("request_id"):
        attributes[REQUEST_ID_ATTRIBUTE] = str(task["request_id"])
    span = _state["tracer"].start_span(
        f"task {name}", context=parent, kind=trace.SpanKind.CONSUMER, attributes=attributes
    )
    token = context.attach(trace.set_span_in_context(span, parent))
    _state["tasks"][str(task.get("id", ""))] = (span, token)


def _task_end(sender: Any, func: Any, task: dict[str, Any], **kwargs: Any) -> None:
    """post_execute_in_worker: close the task's span with its outcome."""
    from opentelemetry import context, trace

    opened = _state.get("tasks", {}).pop(str(task.get("id", "")), None)
    if opened is None:
        return
    span, token = opened
    # A worker sets "success" before this signal; a synchronous task that raised has none.
    if task.get("success") is not True:
        span.set_status(trace.Status(trace.StatusCode.ERROR))
    span.end()
    try:
        context.detach(token)
    except ValueError:  # detached in another context: the span is closed all the same
        logger.debug("task span context detached elsewhere")
