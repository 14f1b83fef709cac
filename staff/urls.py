"""Staff pages: login, logout, password change, dashboard."""

from django.urls import path

from staff import views

app_name = "staff"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
]
