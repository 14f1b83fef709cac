"""Staff pages: login, logout, password change, dashboard, placeholders, system health."""

from django.urls import path

from staff import views

app_name = "staff"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("system/health/", views.system_health, name="system_health"),
    path("soon/<slug:feature>/", views.coming_soon, name="coming_soon"),
]
