"""The console's pages: dashboard, system health, the audit trail, placeholders for later pages."""

from django.urls import path

from console import views
from console.audit import views as audit_views

app_name = "console"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("system/health/", views.system_health, name="system_health"),
    path("soon/<slug:feature>/", views.coming_soon, name="coming_soon"),
    path("audit/", audit_views.audit_list, name="audit"),
    path("audit/export.csv", audit_views.audit_export, name="audit_export"),
    path("audit/verify/", audit_views.audit_verify, name="audit_verify"),
    path("audit/<int:pk>/", audit_views.audit_detail, name="audit_detail"),
]
