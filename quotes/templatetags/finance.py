"""Template filters of the finance pages: money with its currency, fractions as percents, times.

Kept minimal until the shared `ui` library (money, time, countdown includes) lands; the markup
they produce follows it (`1,234.56 USD`, `<time datetime>` with the zone)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from django import template

register = template.Library()


@register.filter
def money(amount: Decimal | None, currency: str = "") -> str:
    """1234.5 USD -> "1,234.50 USD"; None -> "—"."""
    if amount is None or amount == "":
        return "—"
    value = Decimal(str(amount)).quantize(Decimal("0.01"))
    text = f"{value:,.2f}"
    return f"{text} {currency}".strip()


@register.filter
def percent(fraction: Decimal | None) -> str:
    """A fraction as the upstream states it (0.005) shown as 0.5 %."""
    if fraction is None:
        return "—"
    value = (Decimal(str(fraction)) * 100).normalize()
    return f"{value:f} %"


@register.filter
def rate(value: Decimal | None) -> str:
    if value is None:
        return "—"
    return f"{Decimal(str(value)):.6f}"


@register.filter
def iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


@register.filter
def when(value: datetime | None) -> str:
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
