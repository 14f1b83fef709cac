"""`{% step_up_notice %}`: before a sensitive form, a "Confirm it's you" link to the step-up
prompt while the session's second factor is not fresh (docs/staff.md, "Actions that need
step-up")."""

from __future__ import annotations

from typing import Any

from django import template

from staff.middleware import step_up_return_path, step_up_url
from staff.step_up import step_up_fresh, step_up_minutes

register = template.Library()


@register.inclusion_tag("includes/step_up_notice.html", takes_context=True)
def step_up_notice(context: template.Context, next: str = "") -> dict[str, Any]:
    """The notice, coming back to this page (or `next`) after the prompt; nothing when the
    session's second factor is fresh (or nobody is signed in)."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if request is None or not getattr(user, "is_authenticated", False) or step_up_fresh(user):
        return {"url": ""}
    return {"url": step_up_url(next or step_up_return_path(request)), "minutes": step_up_minutes()}
