"""A URLconf whose only view fails, to prove the 500 handler hides the error."""

from django.http import HttpRequest, HttpResponse
from django.urls import path


def boom(request: HttpRequest) -> HttpResponse:
    raise ZeroDivisionError("division by zero")


urlpatterns = [path("boom/", boom)]
handler500 = "console.views.server_error"
