"""Health and dashboard warn: an environment in use without a receiver; silence while in flight."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.models import Environment, EnvironmentKind
from payouts.models import Payout
from tests.finance import make_draft, make_staff
from tests.webhooks.conftest import new_event
from webhooks.health import receivers_report, silence_report
from webhooks.models import WebhookEndpoint
from webhooks.services import receivers_missing, silences

pytestmark = pytest.mark.django_db


def _registered(endpoint: WebhookEndpoint) -> WebhookEndpoint:
    from staff import crypto

    endpoint.secret_encrypted = endpoint.secret_encrypted or crypto.encrypt("whsec_for-tests")
    endpoint.registered_at = timezone.now()
    endpoint.registered_url = f"https://payops.example.com/webhooks/in/{endpoint.receiver_id}/"
    endpoint.save()
    return endpoint


def _open_payout(environment: Environment, upstream_id: str = "p-open") -> Payout:
    return make_draft(
        maker=make_staff("finance_maker"),
        environment=environment,
        status="processing",
        upstream_id=upstream_id,
    )


def test_an_environment_in_use_without_a_receiver_warns_until_one_is_registered(
    environment, client_for
) -> None:
    # `environment` is the only active sandbox: everyone's default, so it is in use.
    report = receivers_report()
    assert report["status"] == "warning"
    assert "Sandbox: no webhook receiver registered" in report["detail"]
    assert 'manage.py webhooks register --environment "Sandbox"' in report["detail"]
    html = client_for("admin").get("/").content.decode()
    assert 'data-testid="webhook-receiver-missing"' in html

    # An endpoint that was never sent upstream is not a receiver yet.
    endpoint = WebhookEndpoint.objects.create(environment=environment)
    assert receivers_missing() == [environment]

    _registered(endpoint)
    assert receivers_report()["status"] == "ok"
    html = client_for("admin").get("/").content.decode()
    assert 'data-testid="webhook-receiver-missing"' not in html


def test_an_unused_environment_warns_only_while_it_holds_open_payouts(environment) -> None:
    _registered(WebhookEndpoint.objects.create(environment=environment))
    spare = Environment.objects.create(
        name="Spare production", kind=EnvironmentKind.PRODUCTION, base_url="https://up.invalid"
    )
    assert receivers_missing() == []  # nobody works in it and nothing is open there

    payout = _open_payout(spare)
    assert receivers_missing() == [spare]

    Payout.objects.filter(pk=payout.pk).update(status="completed")
    assert receivers_missing() == []


def test_open_payouts_make_silence_a_warning_until_an_event_arrives(
    endpoint, post_signed, settings
) -> None:
    settings.WEBHOOKS_SILENCE_MINUTES = 30
    _registered(endpoint)
    assert silence_report()["status"] == "ok"  # silent, but nothing is in flight

    # A payout in flight whose events never came: the old heuristic (events received) saw none.
    _open_payout(endpoint.environment)
    (silence,) = silences()
    assert silence.in_flight == 1 and silence.last_valid_at is None
    report = silence_report()
    assert report["status"] == "warning"
    assert (
        (report["detail"])
        == "Sandbox: no valid event for more than 30 minutes while 1 object is in flight"
    )

    post_signed(new_event("user.updated", user_id="u-1"))
    assert silence_report()["status"] == "ok"
    # ...and it comes back once the events stop for longer than the threshold.
    assert silences(now=timezone.now() + timedelta(minutes=31))


def test_an_event_reported_payout_and_an_open_payout_count_once(
    endpoint, post_signed, settings
) -> None:
    settings.WEBHOOKS_SILENCE_MINUTES = 30
    _registered(endpoint)
    post_signed(new_event("payout.created", payout_id="p-open", status="CREATED"))
    _open_payout(endpoint.environment, upstream_id="p-open")

    (silence,) = silences(now=timezone.now() + timedelta(minutes=31))

    assert silence.in_flight == 1


def test_the_webhook_warnings_are_readiness_checks() -> None:
    from console.health import CHECKS
    from webhooks.health import receivers_check, silence_check

    assert CHECKS["webhook_receivers"].run is receivers_check
    assert CHECKS["webhook_silence"].run is silence_check
