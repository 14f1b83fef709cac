"""Alert webhooks reach public addresses only (issue 30 item 4, SSRF): refused when a rule is
saved or proposed (400 on webhook_url), and at delivery after DNS resolution (every address, so
a name rebound to a private address is refused too), recorded in the delivery's history without
the URL. PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS allows them (the local receiver's tests)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from django.utils import timezone

from alerts.delivery import delivery_send
from alerts.models import AlertDelivery, DeliveryChannel, DeliveryState
from alerts.services import alert_fire, rule_create
from alerts.webhook_targets import address_is_public, webhook_host_refusal
from staff.errors import ServiceError
from staff.models import StaffUser

pytestmark = pytest.mark.django_db

PRIVATE_URLS = [
    "http://127.0.0.1:8000/hook",
    "http://localhost/hook",
    "http://api.localhost/hook",
    "http://10.0.0.5/hook",
    "http://192.168.1.10/hook",
    "http://172.16.0.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/hook",
    "http://0.0.0.0/hook",
    "http://[::1]/hook",
    "http://[fd00::1]/hook",
    "http://[fe80::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
]


@pytest.fixture(autouse=True)
def _private_refused(settings: Any) -> None:
    settings.PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS = False  # the product's default


@pytest.mark.parametrize("url", PRIVATE_URLS)
def test_a_private_address_is_refused_as_written(url: str) -> None:
    assert webhook_host_refusal(url) == "private"


def test_public_addresses_and_names_pass_as_written() -> None:
    assert webhook_host_refusal("https://hooks.slack.com/services/T/B/x") == ""
    assert webhook_host_refusal("https://93.184.216.34/hook") == ""
    assert address_is_public("2606:4700:4700::1111")
    assert not address_is_public("not-an-address")


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "http://[::1]/h"])
def test_saving_a_rule_with_a_private_webhook_is_a_400_on_the_field(
    demo_staff: dict[str, StaffUser], url: str
) -> None:
    with pytest.raises(ServiceError) as refused:
        rule_create(
            by=demo_staff["admin"],
            name="R",
            kind="webhook_drift",
            thresholds={"events": 1},
            environment=None,
            webhook_url=url,
        )
    assert refused.value.status == 400
    assert refused.value.errors[0].field == "webhook_url"
    assert url not in refused.value.as_message()


def test_allowed_by_the_setting(settings: Any) -> None:
    settings.PAYOPS_ALERTS_ALLOW_PRIVATE_WEBHOOKS = True
    assert webhook_host_refusal("http://127.0.0.1:9/hook") == ""


def test_a_name_that_resolves_to_a_private_address_is_refused_at_delivery(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, demo_staff: Any
) -> None:
    """DNS rebinding: the name was public when saved; at delivery it resolves (among others) to
    the metadata address. Nothing is sent, the delivery fails at once, the URL is never shown."""
    url = "https://hooks.example.test/services/T000/B000/secret-token"
    rule = rule_create(
        by=demo_staff["admin"],
        name="R",
        kind="webhook_drift",
        thresholds={"events": 1},
        environment=None,
        webhook_url=url,
    )
    alert_fire(rule=rule, subject="environment:x", summary="s", now=timezone.now())
    delivery = AlertDelivery.objects.get(channel=DeliveryChannel.WEBHOOK)

    def resolve(host: str, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        assert host == "hooks.example.test"
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port)),
        ]

    monkeypatch.setattr("alerts.webhook_targets.socket.getaddrinfo", resolve)
    assert delivery_send(delivery_id=delivery.pk) == DeliveryState.FAILED
    delivery = AlertDelivery.objects.get(pk=delivery.pk)
    assert delivery.state == DeliveryState.FAILED
    assert "refused" in delivery.last_error and "private address" in delivery.last_error
    assert url not in delivery.last_error and url not in caplog.text
    assert "secret-token" not in caplog.text and delivery.attempts == 1
