"""The console's pages: dashboard, system health, placeholders for pages still to come."""

from django.urls import path

from console import views

app_name = "console"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("system/health/", views.system_health, name="system_health"),
    path("soon/<slug:feature>/", views.coming_soon, name="coming_soon"),
]
