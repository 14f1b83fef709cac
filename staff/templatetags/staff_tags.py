"""Template helpers for the sign-in pages (durations in words, the time a lockout ends) and the
step-up notice before a sensitive form."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import template
from django.utils import timezone

from staff.middleware import step_up_return_path, step_up_url
from staff.step_up import step_up_fresh, step_up_minutes

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


@register.inclusion_tag("includes/step_up_notice.html", takes_context=True)
def step_up_notice(context: template.Context, next: str = "") -> dict[str, Any]:
    """`{% step_up_notice %}` before a sensitive form: a "Confirm it's you" link to the step-up
    prompt (coming back to this page, or `next`) when the session's second factor is not fresh;
    nothing when it is (or nobody is signed in)."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if request is None or not getattr(user, "is_authenticated", False) or step_up_fresh(user):
        return {"url": ""}
    return {"url": step_up_url(next or step_up_return_path(request)), "minutes": step_up_minutes()}
