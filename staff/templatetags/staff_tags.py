"""Template helpers for the sign-in pages: durations in words."""

from __future__ import annotations

from datetime import timedelta

from django import template

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
