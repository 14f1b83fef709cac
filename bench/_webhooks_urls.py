"""The back office's URLs plus a bare view answering 200: the benchmark's yardstick."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from config.urls import urlpatterns as backoffice_urlpatterns


@csrf_exempt
async def bare(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b'{"status":"accepted"}', content_type="application/json")


urlpatterns = [path("bench/bare/", bare), *backoffice_urlpatterns]
