"""The back office's formatting filters: money, counts, times with their zone, countdowns, badges.

`{% load ui %}` then `{{ amount|money:currency }}`, `{{ calls|count }}`, `{{ moment|when }}`,
`{{ check.status|status_tone }}`, `{{ quote.rate|rate }}`, `{{ fee|percent }}`,
`{{ check.duration_ms|duration }}`. The components
under templates/includes/ use them; docs/ui.md lists both.

Figures and moments follow the active language (docs/ui.md, "Languages"): English keeps
1,234.56 and 2026-11-23 17:26 UTC; Spanish and Brazilian Portuguese write 1.234,56 and
23/11/2026 17:26 UTC, with the separators and the short date of their format modules
(django.conf.locale, config/formats). A money amount always keeps its currency code.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Concatenate

from django import template
from django.utils import dateformat, formats, timezone, translation
from django.utils.text import capfirst
from django.utils.translation import gettext

from staff.audit_actions import audit_action_label, audited_model

register = template.Library()

# Money is shown as the upstream rounds it: half-up to 2 decimals (decisions.md, Pricing).
CENTS = Decimal("0.01")
MISSING = "—"


def as_decimal(value: object) -> Decimal | None:
    """An amount as an exact Decimal: Decimals, ints and strings as they are; a float by its
    shortest repr (never its binary expansion); None, "" or anything unreadable as None."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    try:
        number = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def is_english() -> bool:
    """English (or no language active, as in a task): the formats every English test reads."""
    return (translation.get_language() or "en").lower().startswith("en")


def separators() -> tuple[str, str]:
    """(decimal, thousands) of the active language: English ('.', ','), es and pt-BR (',', '.')."""
    if is_english():
        return ".", ","
    return str(formats.get_format("DECIMAL_SEPARATOR")), str(
        formats.get_format("THOUSAND_SEPARATOR")
    )


def group_thousands(digits: str, separator: str | None = None) -> str:
    """'1234567' -> '1,234,567' (ASCII digits, the active language's separator unless given)."""
    head = len(digits) % 3 or 3
    groups = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    return (separators()[1] if separator is None else separator).join(groups)


def decimal_text(number: Decimal) -> str:
    """A plain decimal (no grouping) with the active language's decimal separator."""
    text = f"{number:f}"
    return text if is_english() else text.replace(".", separators()[0])


def grouped(number: Decimal, places: int | None = None) -> str:
    """`1234.5` -> `1,234.5` (es, pt-BR: `1.234,5`): grouped with the active language's separators,
    every digit kept, or half-up to `places` decimals (the PDFs' figures, docs/ui.md)."""
    if places is not None:
        number = number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    sign = "-" if number < 0 else ""
    whole, _, fraction = f"{abs(number):f}".partition(".")
    decimal, thousands = separators()
    return f"{sign}{group_thousands(whole, thousands)}{decimal + fraction if fraction else ''}"


def utc_when(value: datetime | date | None, precision: str = "minutes") -> str:
    """`when` in UTC whatever the active zone: the PDFs state their times in UTC."""
    with timezone.override(UTC):
        return when(value, precision)


def figure_filter[**P](
    show: Callable[Concatenate[Decimal, P], str],
) -> Callable[Concatenate[object, P], str]:
    """A filter of a figure: `show` gets the value as an exact Decimal; no value shows MISSING."""

    @functools.wraps(show)
    def shown(value: object, *args: P.args, **kwargs: P.kwargs) -> str:
        number = as_decimal(value)
        return MISSING if number is None else show(number, *args, **kwargs)

    return shown


@register.filter
@figure_filter
def money(amount: Decimal, currency: object = "") -> str:
    """`{{ amount|money:"USD" }}` -> `1,234.56 USD` (es, pt-BR: `1.234,56 USD`): exact, half-up to
    cents, currency always."""
    code = str(currency or "").strip().upper() or gettext("(no currency)")
    cents = amount.quantize(CENTS, rounding=ROUND_HALF_UP)
    sign = "-" if cents < 0 else ""
    whole, _, fraction = f"{abs(cents):f}".partition(".")
    decimal, thousands = separators()
    return f"{sign}{group_thousands(whole, thousands)}{decimal}{fraction} {code}"


@register.filter
def is_negative(value: object) -> bool:
    amount = as_decimal(value)
    return amount is not None and amount < 0


@register.filter
@figure_filter
def count(number: Decimal) -> str:
    """`{{ 12345|count }}` -> `12,345`: whole numbers with thousands separators."""
    whole = number.to_integral_value(rounding=ROUND_HALF_UP)
    sign = "-" if whole < 0 else ""
    return sign + group_thousands(f"{abs(whole):f}")


@register.filter
def when(value: datetime | date | None, precision: str = "minutes") -> str:
    """`{{ moment|when }}` -> `2026-11-23 17:26 UTC` (es, pt-BR: `23/11/2026 17:26 UTC`), in the
    active time zone, which is named; `{{ moment|when:"seconds" }}` adds seconds. A naive
    datetime is taken as UTC (USE_TZ)."""
    if value is None or value == "":
        return MISSING
    if not isinstance(value, datetime):
        if not isinstance(value, date):
            return str(value)
        return (
            value.isoformat() if is_english() else formats.date_format(value, "SHORT_DATE_FORMAT")
        )
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    local = timezone.localtime(value)
    zone = local.tzname() or timezone.get_current_timezone_name()
    if not is_english():
        clock = "H:i:s" if precision == "seconds" else "H:i"
        day = str(formats.get_format("SHORT_DATE_FORMAT"))
        return f"{dateformat.format(local, f'{day} {clock}')} {zone}"
    pattern = "%Y-%m-%d %H:%M:%S" if precision == "seconds" else "%Y-%m-%d %H:%M"
    return f"{local.strftime(pattern)} {zone}"


@register.filter
def iso(value: datetime | None) -> str:
    """The ISO 8601 form for `<time datetime>` and scripts (UTC offset included)."""
    if not isinstance(value, datetime):
        return ""
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value.isoformat()


@register.filter
@figure_filter
def percent(number: Decimal) -> str:
    """A fraction as the upstream states it (0.005) shown as `0.5 %` (es, pt-BR: `0,5 %`), exactly
    (no rounding)."""
    return f"{decimal_text((number * 100).normalize())} %"


@register.filter
@figure_filter
def rate(number: Decimal) -> str:
    """An exchange rate to 6 decimals (`5.123400`; es, pt-BR: `5,123400`), half-up, never through
    a float."""
    return decimal_text(number.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP))


def duration_words(seconds: Decimal) -> str:
    """A duration as a person reads it: `0.4 ms`, `120 ms`, `1.2 s` (es, pt-BR: `1,2 s`),
    `2 min 5 s`, `1 h 2 min`: the units are the international symbols in every language."""
    ms = seconds * 1000
    if abs(ms) < 10:
        return f"{decimal_text(ms.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP))} ms"
    if abs(ms) < 1000:
        return f"{decimal_text(ms.quantize(Decimal('1'), rounding=ROUND_HALF_UP))} ms"
    if abs(seconds) < 60:
        return f"{decimal_text(seconds.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP))} s"
    whole = int(seconds.to_integral_value(rounding=ROUND_HALF_UP))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min {secs} s" if secs else f"{minutes} min"


@register.filter
@figure_filter
def duration(number: Decimal, unit: object = "ms") -> str:
    """`{{ check.duration_ms|duration }}` -> `120 ms` or `1.2 s`; `{{ age|duration:"s" }}` for
    seconds. Exact (never through a float's expansion); no value shows `—`."""
    return duration_words(number if str(unit) == "s" else number / 1000)


@register.filter
def remaining_seconds(value: datetime | None) -> int:
    """Seconds from now until `value`, rounded up (0 only once it is past), as the script counts:
    a moment half a second away is not expired yet."""
    if not isinstance(value, datetime):
        return 0
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return max(0, math.ceil((value - timezone.now()).total_seconds()))


def countdown_words(seconds: int, expired_text: str | None = None) -> str:
    """12:05 (minutes:seconds), 1:02:03 past an hour: the text static/js/countdown.js writes."""
    if seconds <= 0:
        return expired_text or gettext("expired")
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@register.filter
def countdown_text(value: datetime | None, expired_text: object = None) -> str:
    return countdown_words(remaining_seconds(value), str(expired_text or "") or None)


# One tone per status word, for every badge in the back office; anything unknown reads as error
# so that a new failure state is never shown calm.
STATUS_TONES = {
    "ok": "ok",
    "up": "ok",
    "healthy": "ok",
    "ready": "ok",
    "active": "ok",
    "verified": "ok",
    "connected": "ok",
    "completed": "ok",
    "approved": "ok",
    "resolved": "ok",
    "applied": "ok",  # an admin change that took effect (staff.ChangeProposal)
    "withdrawn": "muted",
    "warning": "warning",
    "degraded": "warning",
    "stale": "warning",
    "pending": "warning",
    "unverified": "warning",
    "not verified": "warning",
    "not_started": "warning",
    "activating": "warning",
    "pending_approval": "warning",
    "processing": "warning",
    "in_review": "warning",
    "kyt_pending": "warning",
    "draft": "muted",
    "used": "muted",
    "submitting": "info",
    "created": "info",
    "skipped": "muted",
    "unknown": "muted",
    "inactive": "muted",
    "soon": "muted",
    "current": "info",
    "info": "info",
    "sandbox": "info",
    "production": "warning",
}


@register.filter
def status_tone(value: object) -> str:
    """The badge tone of a status word: ok, warning, muted, info, or error for anything else."""
    return STATUS_TONES.get(str(value).strip().lower(), "error")


@register.simple_block_tag
def capture(content: str) -> str:
    """`{% capture as at %}{% include "includes/time.html" with value=x %}{% endcapture %}`: a
    fragment rendered (and escaped) once, kept as safe HTML in a variable, so that a sentence with
    inline markup stays one message: `{% blocktranslate %}resets {{ at }}{% endblocktranslate %}`
    (docs/ui.md, "Languages")."""
    return content


@register.filter
def audit_action(action: object) -> str:
    """`{{ entry.action|audit_action }}`: the action as people read it, in their language (the
    owning app's label, staff.audit_actions); the code stays in the CSV and the API."""
    return audit_action_label(str(action))


@register.filter
def record_type(label: object) -> str:
    """`{{ entry.target_type|record_type }}`: an audit entry's object type (`payouts.payout`) as
    its model's name in the active language (`Payout`); the label itself for a model gone."""
    model = audited_model(str(label))
    if model is None:
        return str(label)
    return capfirst(str(model._meta.verbose_name))
