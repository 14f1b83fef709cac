"""emulator.idempotency.idempotent(): replay, conflicts, scoping and concurrent duplicates."""

import json
import threading
import time

import pytest
from django.test import RequestFactory

from emulator.errors import EmulatorError
from emulator.idempotency import idempotent
from emulator.models import ApiClient, IdempotencyRecord
from tests.emulator.conftest import make_credentials

pytestmark = pytest.mark.django_db(transaction=True)


def post(body, key="k-1", header="idempotency-key", path="/sandbox/v1/things"):
    headers = {header: key} if key is not None else {}
    return RequestFactory().post(
        path, data=json.dumps(body), content_type="application/json", headers=headers
    )


@pytest.fixture
def client():
    return ApiClient.objects.get(pk=make_credentials("idem").pk)


def make_handler(client, calls):
    def handler():
        calls.append(1)
        created = make_credentials(f"created-{len(calls)}")
        return 201, {"data": {"id": created.client_id}}

    return handler


def run(request, client, calls, scope="things", environment="sandbox"):
    return idempotent(
        request,
        client=client,
        environment=environment,
        scope=scope,
        handler=make_handler(client, calls),
    )


def test_missing_key_is_a_400(client):
    with pytest.raises(EmulatorError) as caught:
        run(post({"a": 1}, key=None), client, [])
    assert caught.value.status == 400
    assert caught.value.body == {
        "code": "IDEMPOTENCY_KEY_REQUIRED",
        "message": "idempotency-key header is required",
        "errors": [{"field": "idempotency-key", "message": "required"}],
    }


def test_same_key_same_body_replays(client):
    calls: list[int] = []
    first = run(post({"a": 1, "b": [1, 2]}), client, calls)
    # Same JSON, other key order and spacing, other header case: the same request.
    again = run(post({"b": [1, 2], "a": 1}, header="Idempotency-Key"), client, calls)
    assert first == again
    assert first[0] == 201
    assert len(calls) == 1
    assert ApiClient.objects.filter(name__startswith="created-").count() == 1


def test_same_key_other_body_is_a_409(client):
    calls: list[int] = []
    run(post({"a": 1}), client, calls)
    with pytest.raises(EmulatorError) as caught:
        run(post({"a": 2}), client, calls)
    assert caught.value.status == 409
    assert caught.value.body["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert len(calls) == 1


def test_keys_are_scoped_by_client_environment_and_scope(client):
    calls: list[int] = []
    other = ApiClient.objects.get(pk=make_credentials("other").pk)
    run(post({"a": 1}), client, calls)
    run(post({"a": 1}), other, calls)
    run(post({"a": 1}), client, calls, environment="production")
    run(post({"a": 1}), client, calls, scope="other-scope")
    assert len(calls) == 4
    assert IdempotencyRecord.objects.count() == 4


def test_a_failing_handler_stores_nothing(client):
    def failing():
        make_credentials("half-done")
        raise EmulatorError(400, {"code": "bad"})

    with pytest.raises(EmulatorError):
        idempotent(post({"a": 1}), client=client, environment="sandbox", scope="s", handler=failing)
    assert IdempotencyRecord.objects.count() == 0
    assert not ApiClient.objects.filter(name="half-done").exists()
    calls: list[int] = []
    assert run(post({"a": 1}), client, calls, scope="s")[0] == 201


def test_concurrent_duplicates_create_one_object(client):
    results: list[object] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def slow_handler():
        created = make_credentials("concurrent")
        time.sleep(0.3)  # hold the transaction open while the duplicate arrives
        return 201, {"data": {"id": created.client_id}}

    def worker():
        from django.db import connection

        try:
            barrier.wait()
            results.append(
                idempotent(
                    post({"a": 1}),
                    client=client,
                    environment="sandbox",
                    scope="race",
                    handler=slow_handler,
                )
            )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert len(results) == 2 and results[0] == results[1]
    assert ApiClient.objects.filter(name="concurrent").count() == 1
