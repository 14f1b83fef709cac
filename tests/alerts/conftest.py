"""Alerts' fixtures: a webhook receiver over real HTTP; http:// webhook URLs allowed for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.alerts.receiver import Receiver, webhook_receiver


@pytest.fixture(autouse=True)
def _local_webhooks(settings: Any) -> None:
    # The receiver listens on 127.0.0.1: private webhook addresses are allowed for it here only
    # (tests/alerts/test_webhook_targets.py proves the refusal with the product's default).
    settings.ALERTS_WEBHOOK_ALLOW_HTTP = True
    settings.PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS = True


@pytest.fixture(autouse=True)
def _tasks_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """django-q2 runs queued tasks inline (on commit), as a worker would, in-process."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as found:
        yield found
