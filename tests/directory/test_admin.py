"""The directory's admin pages: readable by the admin, read-only, constant queries per list."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gateway.models import Environment, EnvironmentKind
from staff.models import StaffUser
from tests.directory.test_pages import seed
from tests.identity import client_signed_in


@pytest.fixture
def environment(db: None) -> Environment:
    return Environment.objects.create(
        name="Admin", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
    )


@pytest.mark.parametrize(
    "model",
    [
        "users/enduser",
        "users/kycreview",
        "accounts/virtualaccount",
        "accounts/recipient",
        "accounts/deposit",
    ],
)
def test_admin_lists_are_read_only_and_cost_constant_queries(
    environment: Environment, staff: dict[str, StaffUser], model: str
) -> None:
    client = client_signed_in(staff["admin"])
    path = f"/admin/{model}/"

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        return len(queries)

    seed(environment, staff, 2)
    count()
    few = count()
    seed(environment, staff, 20, offset=2)
    assert count() == few
    assert client.get(f"/admin/{model}/add/").status_code == 403
