"""The back office's NinjaAPI at /api/v1; each app adds its Router here. Docs are staff-only."""

from django.contrib.admin.views.decorators import staff_member_required
from ninja import NinjaAPI
from ninja.security import django_auth

api = NinjaAPI(
    title="PayOps API",
    version="1",
    urls_namespace="api",
    auth=django_auth,
    docs_decorator=staff_member_required,
)


@api.get("/me", tags=["staff"])
def me(request):  # type: ignore[no-untyped-def]
    """The logged-in staff member and their roles."""
    user = request.auth
    return {"email": user.email, "roles": sorted(g.name for g in user.groups.all())}
