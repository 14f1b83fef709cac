"""The back office's NinjaAPI at /api/v1; each app adds its Router here. Docs are staff-only."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema
from ninja.security import django_auth

from staff.roles import has_staff_role, user_roles


def staff_docs_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The OpenAPI page and schema: anonymous users go to the login page, role-less ones get 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not has_staff_role(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper


api = NinjaAPI(
    title="PayOps API",
    version="1",
    urls_namespace="api",
    auth=django_auth,
    docs_decorator=staff_docs_only,
)


class MeOut(Schema):
    email: str
    full_name: str
    roles: list[str]


@api.get("/me", response=MeOut, tags=["staff"])
def me(request: HttpRequest) -> MeOut:
    """The logged-in staff member and their roles."""
    user = request.user
    return MeOut(
        email=user.email,  # type: ignore[union-attr]
        full_name=user.full_name,  # type: ignore[union-attr]
        roles=[role.key for role in user_roles(user)],
    )


from payouts.api import router as payouts_router  # noqa: E402
from quotes.api import router as quotes_router  # noqa: E402

api.add_router("/", quotes_router)
api.add_router("/", payouts_router)
