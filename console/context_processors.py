"""Template context shared by every staff page: the user's navigation, roles and live socket."""

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest

from console.navigation import DASHBOARD, navigation_for
from staff.changes import changes_pending_count
from staff.roles import ADMIN_CHANGES_DECIDE, user_roles


def navigation(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "nav_dashboard": DASHBOARD,
        "nav_sections": navigation_for(user),
        "staff_roles": user_roles(user),
        # The Changes item's count for admins: admin changes waiting for a decision (one query).
        "nav_changes_pending": (
            changes_pending_count() if user.has_perm(ADMIN_CHANGES_DECIDE) else 0
        ),
        # Live regions (static/js/live.js) need the websocket only the ASGI server offers.
        "live_socket": "/ws/events/" if isinstance(request, ASGIRequest) else "",
    }
