"""Template helpers for console pages: the badge modifier of a status word."""

from __future__ import annotations

from django import template

register = template.Library()


_STATUS_CLASSES = {
    "ok": "ok",
    "up": "ok",
    "healthy": "ok",
    "ready": "ok",
    "warning": "warning",
    "degraded": "warning",
    "stale": "warning",
    "skipped": "muted",
    "unknown": "muted",
}


@register.filter
def status_class(value: object) -> str:
    """The badge modifier for a status word: ok, warning, muted, or error for anything else."""
    return _STATUS_CLASSES.get(str(value).lower(), "error")
