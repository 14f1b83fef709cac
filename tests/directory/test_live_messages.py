"""Directory records tell open pages when they change: every timeline line sends a live message
(to the roles that may read the directory), written in the change's own transaction. Each call
commits on its own here (transactional_db), as in production."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from accounts.models import VirtualAccount
from console.broadcast import role_group
from console.models import LiveMessage
from gateway.models import Environment, EnvironmentKind
from staff.roles import DIRECTORY_VIEW, ROLES
from tests.directory.test_events import (
    accepted,
    created,
    deposit,
    va_activated,
    va_apply,
    va_created,
)
from users.events import end_user_apply_event
from users.models import EndUser

pytestmark = pytest.mark.usefixtures("outbox_layer")
READERS = {role_group(role.key) for role in ROLES if DIRECTORY_VIEW in role.permissions}


@pytest.fixture
def environment(transactional_db: None) -> Environment:
    return Environment.objects.create(
        name="live", kind=EnvironmentKind.SANDBOX, base_url="http://127.0.0.1:9"
    )


def sent(kind: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (row.group, row.message["payload"])
        for row in LiveMessage.objects.order_by("id")
        if row.message["kind"] == kind
    ]


def test_a_verification_decision_reaches_the_directory_readers(environment: Environment) -> None:
    end_user_apply_event(environment=environment, event_type="user.created", data=created())
    LiveMessage.objects.all().delete()

    end_user_apply_event(
        environment=environment, event_type="user.verification.accepted", data=accepted()
    )

    end_user = EndUser.objects.get()
    messages = sent("end_user.changed")
    assert {group for group, _ in messages} == READERS
    assert {str(payload) for _, payload in messages} == {str({"end_user_id": end_user.pk})}


def test_an_activation_names_the_account_and_its_end_user(environment: Environment) -> None:
    va_apply(environment, "virtual_account.created", va_created())
    LiveMessage.objects.all().delete()

    va_apply(environment, "virtual_account.activated", va_activated())

    va = VirtualAccount.objects.get()
    assert va.status == "active"
    payloads = [payload for _, payload in sent("virtual_account.changed")]
    assert len(payloads) == len(READERS)
    assert payloads[0] == {"end_user_id": va.end_user_id, "virtual_account_id": va.pk}


def test_a_deposit_reaches_the_account_page(environment: Environment) -> None:
    va_apply(environment, "virtual_account.activated", va_activated())
    LiveMessage.objects.all().delete()

    va_apply(environment, "virtual_account.deposit_funds_received", deposit("evt_d1", "dep_1"))

    va = VirtualAccount.objects.get()
    assert {payload["virtual_account_id"] for _, payload in sent("virtual_account.changed")} == {
        va.pk
    }


def test_a_redelivered_event_changes_nothing_and_sends_nothing(environment: Environment) -> None:
    end_user_apply_event(environment=environment, event_type="user.created", data=created())
    LiveMessage.objects.all().delete()

    end_user_apply_event(environment=environment, event_type="user.created", data=created())

    assert LiveMessage.objects.count() == 0


def test_a_change_that_rolls_back_sends_nothing(environment: Environment) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        end_user_apply_event(environment=environment, event_type="user.created", data=created())
        raise RuntimeError("the caller's transaction fails later")

    assert LiveMessage.objects.count() == 0
