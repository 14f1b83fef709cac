"""Staff sign-in pages: login, logout, password change."""

from django.urls import path

from staff import change_views, views
from staff.second_factor import views as second_factor

app_name = "staff"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    # The step-up prompt (?next=...): its URL is fixed here so every app can send people to it.
    path("step-up/", second_factor.step_up, name="step_up"),
    path("login/second-factor/", second_factor.second_factor, name="second_factor"),
    path("login/enrol/", second_factor.enrol, name="enrol"),
    path("login/enrol/totp/", second_factor.enrol_totp, name="enrol_totp"),
    path("login/enrol/passkey/", second_factor.enrol_passkey_done, name="enrol_passkey_done"),
    path("login/recovery-codes/", second_factor.recovery_codes, name="recovery_codes"),
    path(
        "profile/second-factor/<str:kind>/<int:pk>/remove/",
        second_factor.device_remove,
        name="second_factor_remove",
    ),
    path("second-factor-resets/", second_factor.resets, name="second_factor_resets"),
    path(
        "second-factor-resets/<int:pk>/confirm/",
        second_factor.reset_confirm,
        name="second_factor_reset_confirm",
    ),
    # Admin changes (maker-checker, staff.changes).
    path("changes/", change_views.changes, name="changes"),
    path("changes/<int:pk>/approve/", change_views.change_approve_view, name="change_approve"),
    path("changes/<int:pk>/reject/", change_views.change_reject_view, name="change_reject"),
    path("changes/<int:pk>/withdraw/", change_views.change_withdraw_view, name="change_withdraw"),
]
