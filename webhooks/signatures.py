"""Signature check of a delivery in decisions.md 4's order: a pure function of explicit inputs."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from webhooks.jsonjs import js_reserialise
from webhooks.models import SignedOver

_HEX_64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class SignatureCheck:
    valid: bool
    reason: str = ""
    matched_secret: str = ""  # a SecretSlot value
    signed_over: str = ""  # a SignedOver value
    # The re-serialised body, when the raw check failed and the body parsed (shown on the page).
    reserialised: bytes | None = None


def sign(body: bytes, secret: str) -> str:
    return hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def normalise_signature(header: str) -> str:
    """Lower-case hex without the optional `sha256=` prefix an integrator SDK may send."""
    value = header.strip()
    if value[:7].lower() == "sha256=":
        value = value[7:]
    return value.strip().lower()


def verify_signature(
    *, body: bytes, header: str | None, secrets: list[tuple[str, str]]
) -> SignatureCheck:
    """
    Check `header` against HMAC-SHA256 hex of the raw bytes, then of the body re-serialised as
    JavaScript's JSON.stringify would write it; for each form, the secrets in the order given
    (slot, secret): current, then pending, then previous while its window lasts.
    """
    if not header or not header.strip():
        return SignatureCheck(False, "missing x-signature-sha256 header")
    if not secrets:
        return SignatureCheck(False, "no webhook secret is configured for this endpoint")
    given = normalise_signature(header)
    if not _HEX_64.match(given):
        return SignatureCheck(False, "signature is not 64 hex characters")
    for slot, secret in secrets:
        if hmac.compare_digest(sign(body, secret), given):
            return SignatureCheck(True, matched_secret=slot, signed_over=SignedOver.RAW)
    try:
        reserialised = js_reserialise(body)
    except (ValueError, RecursionError):
        return SignatureCheck(False, "signature does not match (body is not JSON)")
    for slot, secret in secrets:
        if hmac.compare_digest(sign(reserialised, secret), given):
            return SignatureCheck(
                True,
                matched_secret=slot,
                signed_over=SignedOver.RESERIALISED,
                reserialised=reserialised,
            )
    return SignatureCheck(False, "signature does not match", reserialised=reserialised)
