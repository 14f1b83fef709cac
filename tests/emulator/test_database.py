"""The emulator's own database: its tables live only there; a back-office lock never stalls it."""

from __future__ import annotations

import httpx
import pytest
from django.db import connections, router, transaction

from emulator.database import EMULATOR_DB
from emulator.models import ApiClient, Payout, Quote
from staff.models import AuditEntry, StaffUser

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_router_sends_emulator_models_to_their_alias_and_nothing_else() -> None:
    for model in (ApiClient, Quote, Payout):
        assert router.db_for_read(model) == EMULATOR_DB
        assert router.db_for_write(model) == EMULATOR_DB
        assert router.allow_migrate_model(EMULATOR_DB, model)
        assert not router.allow_migrate_model("default", model)
    for model in (StaffUser, AuditEntry):
        assert router.db_for_write(model) in (None, "default")
        assert not router.allow_migrate_model(EMULATOR_DB, model)


def test_each_database_holds_only_its_own_tables() -> None:
    default_tables = set(connections["default"].introspection.table_names())
    emulator_tables = set(connections[EMULATOR_DB].introspection.table_names())
    assert ApiClient._meta.db_table in emulator_tables
    assert ApiClient._meta.db_table not in default_tables
    assert StaffUser._meta.db_table in default_tables
    assert {t for t in emulator_tables if not t.startswith("emulator_")} <= {"django_migrations"}


def test_a_back_office_write_transaction_does_not_stall_the_emulator(
    http: httpx.Client, control: httpx.Client, api_client
) -> None:
    # The back office holds its database's write lock (SQLite: the whole file) while the emulator
    # issues a token; with a shared file this waited for the lock (20 s and more).
    with transaction.atomic():
        StaffUser.objects.create_user("lock-holder@example.test", "pw-lock-12345")
        response = http.post(
            "/sandbox/auth",
            json={"client_id": api_client.client_id, "password": api_client.password},
            headers={"x-api-key": api_client.api_key},
            timeout=10,
        )
        # A write of the emulator's own (a new API client) while the lock is still held: on a
        # shared SQLite file it would wait out the 30 s busy timeout, past this 10 s one.
        issued = control.post("/_control/clients", json={"name": "during-lock"}, timeout=10)
    assert response.status_code == 200, response.text
    assert issued.status_code == 201, issued.text
