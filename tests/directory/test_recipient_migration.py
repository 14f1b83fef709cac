"""Migration accounts.0006: recipients registered before dual control stay payable, marked
approved by "migration" with a line on their timeline (docs/directory.md, CHANGELOG)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from staff.models import StaffUser
from tests.finance import make_end_user, make_environment

BEFORE = [("accounts", "0004_submission_bound_to_creator_and_request")]
AFTER = [("accounts", "0006_existing_recipients_approved_by_migration")]


@pytest.fixture
def back_to_latest() -> Iterator[None]:
    """Whatever the test migrated to, the database ends at the latest migrations again."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_existing_recipients_stay_payable_approved_by_migration(back_to_latest: None) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    # Only accounts moved back: the other apps' tables are today's.
    user = StaffUser.objects.create_user("old@payops.test", "pw-not-secret-123")
    environment = make_environment()
    end_user = make_end_user(environment)
    old.get_model("accounts", "Recipient").objects.create(
        environment_id=environment.pk,
        end_user_id=end_user.pk,
        upstream_id="rcp_1",
        kind="individual",
        first_name="Old",
        last_name="Payee",
        street_name="1 Main St",
        city="Austin",
        country="US",
        account_type="WIRE",
        account_number="123456789",
        routing_number="021000021",
        created_by_id=user.pk,
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    recipient = new.get_model("accounts", "Recipient").objects.get()
    assert (recipient.status, recipient.approval_note) == ("approved", "migration")
    assert recipient.approved_at is not None and recipient.approved_by_id is None
    line = new.get_model("accounts", "RecipientTimelineEntry").objects.get()
    assert line.summary.startswith("Approved by migration")
