"""Websocket routes of the back office."""

from django.urls import path

from console.consumers import StaffEventsConsumer

websocket_urlpatterns = [
    path("ws/events/", StaffEventsConsumer.as_asgi()),
]
