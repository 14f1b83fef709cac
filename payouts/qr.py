"""Deposit address QR codes, drawn on the server as inline SVG (segno; no JavaScript, no images)."""

from __future__ import annotations

import segno
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext


def deposit_qr_svg(address: str, *, scale: int = 4) -> SafeString:
    """
    The wallet address alone, as wallets scan it: no amount or network in the payload, since the
    URI schemes differ per chain and a wrong one makes a wallet refuse or, worse, guess. The page
    prints network, currency and amount beside the code instead.
    """
    if not address:
        raise ValueError("no address to encode")
    svg = segno.make(address, error="m", micro=False).svg_inline(
        scale=scale,
        title=gettext("Deposit address %(address)s") % {"address": address},
        dark="#111",
        light="#fff",
    )
    # segno escapes the title and emits only its own markup: safe to inline.
    return mark_safe(svg)  # noqa: S308
