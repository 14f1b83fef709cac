"""Template helpers for the sign-in pages: durations in words and the time a lockout ends."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def duration_words(value: timedelta | None) -> str:
    """15 minutes, 1 hour 30 minutes, 45 seconds."""
    if value is None:
        return ""
    seconds = max(int(value.total_seconds()), 0)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = []
    for amount, unit in ((hours, "hour"), (minutes, "minute"), (seconds, "second")):
        if amount:
            parts.append(f"{amount} {unit}{'' if amount == 1 else 's'}")
    return " ".join(parts) or "a moment"


@register.simple_tag
def ends_at(value: timedelta | None) -> datetime | None:
    """Now plus value: a failure during a lockout restarts its cool-off, so this is its end."""
    if value is None:
        return None
    return timezone.now() + value
