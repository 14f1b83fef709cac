"""Payouts polling cannot read within their cadence are named on health (issue 30, item 12)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from gateway.models import Environment
from payouts.models import Payout
from payouts.tracking.health import polling_late_report
from payouts.tracking.polling.run import poll_environment
from tests.finance import make_draft, make_environment


@pytest.mark.django_db
def test_payouts_the_allowance_cannot_read_in_their_cadence_are_named_on_health(
    maker: Any, settings: Any
) -> None:
    environment = Environment.objects.first() or make_environment()
    settings.PAYOUTS_POLL_SHARE = 0.0001  # less than one call a pass: nothing can be read
    assert polling_late_report()["status"] == "ok"
    for n in range(3):
        payout = make_draft(
            maker=maker, environment=environment, status="processing", upstream_id=f"late-{n}"
        )
        # In `processing` for 3 hours (read every 30 minutes then), never read: late.
        Payout.objects.filter(pk=payout.pk).update(updated_at=timezone.now() - timedelta(hours=3))
    fresh = make_draft(maker=maker, environment=environment, status="processing", upstream_id="f")
    assert fresh.upstream_id == "f"  # just moved: due in 10 minutes, not late

    assert poll_environment(environment, now=timezone.now()) == 0
    report = polling_late_report()
    assert report["status"] == "warning"
    assert f"3 in {environment.name}" in report["detail"]


def test_the_polling_warning_is_a_readiness_check() -> None:
    from console.health import CHECKS
    from payouts.tracking.health import polling_late_check

    assert CHECKS["payouts_polling"].run is polling_late_check
