"""Template context for every page: the environment the staff member works in (the badge)."""

from __future__ import annotations

from django.http import HttpRequest

from gateway.selectors import environment_current


def current_environment(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"current_environment": environment_current(user=user)}
