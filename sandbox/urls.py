"""Sandbox-only pages and actions, mounted by config.urls only when this app is installed."""

from django.urls import path

from sandbox import otp_views, webhook_views

app_name = "sandbox"
urlpatterns = [
    path(
        "webhooks/<int:environment_pk>/test-event/",
        webhook_views.webhook_test_event_send,
        name="webhook_test_event",
    ),
    path("payouts/otp/", otp_views.otp_mailbox, name="otp_mailbox"),
]
