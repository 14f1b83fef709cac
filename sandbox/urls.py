"""URLs of the sandbox-only staff actions (mounted only where the sandbox app is installed)."""

from django.urls import path

from sandbox import directory, otp_views, webhook_views

app_name = "sandbox"

urlpatterns = [
    path("end-users/<int:pk>/decide/", directory.decide_end_user, name="decide_end_user"),
    path("virtual-accounts/<int:pk>/deposit/", directory.simulate_deposit, name="simulate_deposit"),
    path(
        "webhooks/<int:environment_pk>/test-event/",
        webhook_views.webhook_test_event_send,
        name="webhook_test_event",
    ),
    path("payouts/otp/", otp_views.otp_mailbox, name="otp_mailbox"),
]
