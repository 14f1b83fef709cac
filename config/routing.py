"""Websocket routes of the back office."""

from django.urls import path

from staff.consumers import StaffEventsConsumer
from webhooks.consumers import WebhookStreamConsumer

websocket_urlpatterns = [
    path("ws/events/", StaffEventsConsumer.as_asgi()),
    path("ws/webhooks/", WebhookStreamConsumer.as_asgi()),
]
