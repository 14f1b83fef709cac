"""Staff sign-in pages: login, logout, password change."""

from django.urls import path

from staff import views

app_name = "staff"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    # The step-up prompt (?next=...): the second-factor branch builds it; its URL is fixed here so
    # every app can send people to it.
    path("step-up/", views.step_up, name="step_up"),
]
