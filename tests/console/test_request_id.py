"""A request's id: in its response, its JSON log lines, its tasks and its upstream calls."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django_q.signals import pre_execute
from django_q.signing import SignedPackage
from django_q.tasks import async_task

from console.log_filters import JsonFormatter, RequestIdFilter
from console.middleware import current_request_id, request_id_use
from gateway.client import call_sync, upstream
from tests.gateway.conftest import LiveEmulator, make_environment
from tests.gateway.conftest import live_emulator as live_emulator  # the fixture, reused

GIVEN = "req-0123456789abcdef"
logger = logging.getLogger("tests.request_id")


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What the root logger writes through the production JSON handler (the settings' filter)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield stream
    finally:
        root.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_a_valid_incoming_id_is_kept_and_returned(db: None) -> None:
    response = Client().get("/healthz", HTTP_X_REQUEST_ID=GIVEN)
    assert response["X-Request-ID"] == GIVEN


@pytest.mark.parametrize("given", ["", "short", "has spaces in it ok", "x" * 129, "a\nforged=1"])
def test_an_invalid_or_missing_id_is_replaced_by_a_new_one(db: None, given: str) -> None:
    headers = {"HTTP_X_REQUEST_ID": given} if given else {}
    first = Client().get("/healthz", **headers)["X-Request-ID"]
    second = Client().get("/healthz", **headers)["X-Request-ID"]
    assert first != given and len(first) == 32 and first != second


def test_the_request_id_is_in_the_requests_json_log_line(db: None, json_lines: io.StringIO) -> None:
    Client().get("/no-such-page-here/", HTTP_X_REQUEST_ID=GIVEN)

    not_found = [line for line in lines(json_lines) if line["logger"] == "django.request"]
    assert not_found, json_lines.getvalue()
    assert not_found[0]["request_id"] == GIVEN
    assert not_found[0]["level"] == "WARNING"
    assert "/no-such-page-here/" in not_found[0]["message"]
    assert current_request_id() == ""  # nothing leaks past the request


def log_in_task() -> None:
    logger.warning("task ran")


def test_a_task_carries_the_id_into_its_log_lines(db: None, json_lines: io.StringIO) -> None:
    from django_q.brokers import get_broker

    broker = get_broker()
    broker.purge_queue()
    request_id_use(GIVEN)
    try:
        async_task(log_in_task)
    finally:
        request_id_use("")
    # The queued package carries it (as a worker process receives it)...
    [(_, package)] = [(key, body) for key, body in broker.dequeue() or []]
    task = SignedPackage.loads(package)
    assert task["request_id"] == GIVEN

    # ...and a worker (another thread: nothing of ours in its context) logs under it.
    def worker() -> None:
        pre_execute.send(sender="django_q", func=log_in_task, task=task)
        task["func"]()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()

    [line] = [line for line in lines(json_lines) if line["message"] == "task ran"]
    assert line["request_id"] == GIVEN


def test_the_upstream_receives_the_id_and_the_call_is_logged_with_it(
    live_emulator: LiveEmulator, json_lines: io.StringIO
) -> None:
    sandbox = make_environment(live_emulator)
    request_id_use(GIVEN)
    try:
        call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)
    finally:
        request_id_use("")

    requests = live_emulator.witness.api_requests()
    assert requests and all(r["headers"].get("x-request-id") == GIVEN for r in requests)
    calls = [line for line in lines(json_lines) if line["message"].startswith("upstream ")]
    assert calls and all(line["request_id"] == GIVEN for line in calls)


def test_without_a_request_no_id_is_sent(live_emulator: LiveEmulator) -> None:
    sandbox = make_environment(live_emulator)
    call_sync(upstream(sandbox).quotations.create, quote_currency="MXN", amount=100)
    assert all("x-request-id" not in r["headers"] for r in live_emulator.witness.api_requests())
