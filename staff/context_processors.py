"""Template context shared by every staff page (placeholder)."""

from django.http import HttpRequest


def navigation(request: HttpRequest) -> dict[str, object]:
    return {}
