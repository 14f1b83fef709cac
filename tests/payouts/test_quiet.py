"""A payout quiet past its state's expected time: the pure decision, the warning, the panel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from gateway.models import Environment
from payouts.models import Payout, PayoutEvent
from payouts.tracking.health import quiet_payouts, quiet_report
from payouts.tracking.quiet import CRYPTO_CREATED, EXPECTED_QUIET, expected_quiet, quiet_verdict
from tests.finance import make_draft, make_environment

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("status", sorted(EXPECTED_QUIET))
def test_quiet_within_the_expected_time_is_normal_and_past_it_is_not(status: str) -> None:
    expected = EXPECTED_QUIET[status]
    on_time = quiet_verdict(status=status, mode="fiat", last_news_at=NOW - expected, now=NOW)
    late = quiet_verdict(
        status=status, mode="fiat", last_news_at=NOW - expected - timedelta(seconds=1), now=NOW
    )
    assert on_time is None
    assert late is not None and late.expected == expected
    assert late.quiet_for == expected + timedelta(seconds=1)


def test_a_crypto_payout_waiting_for_its_deposit_has_longer() -> None:
    assert expected_quiet(status="created", mode="crypto") == CRYPTO_CREATED
    assert expected_quiet(status="created", mode="fiat") < CRYPTO_CREATED  # type: ignore[operator]
    an_hour = NOW - timedelta(hours=1)
    assert quiet_verdict(status="created", mode="crypto", last_news_at=an_hour, now=NOW) is None
    assert quiet_verdict(status="created", mode="fiat", last_news_at=an_hour, now=NOW)


@pytest.mark.parametrize(
    "status",
    ["draft", "pending_approval", "approved", "completed", "failed", "returned", "cancelled"],
)
def test_states_people_own_and_final_states_expect_no_news(status: str) -> None:
    long_ago = NOW - timedelta(days=365)
    assert quiet_verdict(status=status, mode="fiat", last_news_at=long_ago, now=NOW) is None


def _processing(maker, hours: float) -> Payout:  # type: ignore[no-untyped-def]
    environment = Environment.objects.first() or make_environment()
    payout = make_draft(
        maker=maker, environment=environment, status="processing", upstream_id=f"p-{hours}"
    )
    Payout.objects.filter(pk=payout.pk).update(updated_at=timezone.now() - timedelta(hours=hours))
    return Payout.objects.get(pk=payout.pk)


@pytest.mark.django_db
def test_a_quiet_payout_warns_until_news_arrives(maker, client_for) -> None:
    _processing(maker, hours=2)  # within the day a wire may take
    assert quiet_payouts() == []
    assert quiet_report()["status"] == "ok"

    late = _processing(maker, hours=25)
    (found,) = quiet_payouts()
    assert found.payout == late
    report = quiet_report()
    assert report["status"] == "warning"
    assert (
        f"payout {late.pk} (Offline sandbox), Processing with no news for 25 h"
        in (report["detail"])
    )
    assert "(expected within 24 h 00 min)" in report["detail"]
    html = client_for("finance_approver").get("/").content.decode()
    assert 'data-testid="quiet-payout"' in html and f"Payout {late.pk}</a>" in html

    # An event about it (even one that changed nothing) is news: the warning clears.
    PayoutEvent.objects.create(
        environment=late.environment,
        payout=late,
        upstream_id=late.upstream_id,
        event_id="evt_still_processing",
        event_type="payout.status_changed",
        source="event",
        status="processing",
    )
    assert quiet_payouts() == []
    html = client_for("finance_approver").get("/").content.decode()
    assert 'data-testid="quiet-payout"' not in html


def test_the_quiet_warning_is_a_readiness_check() -> None:
    from console.health import CHECKS
    from payouts.tracking.health import quiet_check

    assert CHECKS["payouts_quiet"].run is quiet_check
