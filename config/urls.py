"""Root URLconf of the back office (the emulator has its own: emulator.urls)."""

from django.apps import apps
from django.contrib import admin
from django.urls import include, path

from config.api import api
from console import health, metrics

admin.site.site_header = "PayOps administration"
admin.site.site_title = "PayOps admin"
admin.site.index_title = "Back-office data"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("gateway/", include("gateway.urls")),
    path("quotes/", include("quotes.urls")),
    path("payouts/", include("payouts.urls")),
    path("books/", include("books.urls")),
    path("analytics/", include("analytics.urls")),
    path("alerts/", include("alerts.urls")),
    path("webhooks/", include("webhooks.urls")),
    path("profile/", include("staff.token_urls")),
    # Passkeys: django-otp-webauthn's JSON endpoints, wired to staff's second factor.
    path("webauthn/", include("staff.second_factor.passkeys")),
    path("end-users/", include("users.urls")),
    path("accounts/", include("accounts.urls")),
    path("", include("staff.urls")),
    path("", include("console.urls")),
]
if apps.is_installed("sandbox"):
    # Dev-only staff actions on the emulator (local and test settings; never production).
    urlpatterns.insert(0, path("sandbox/", include("sandbox.urls")))

handler403 = "console.views.permission_denied"
handler404 = "console.views.page_not_found"
handler500 = "console.views.server_error"
