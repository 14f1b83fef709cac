"""Webhook pages (endpoints, event log, event page, missed events) and the receiver path."""

from django.urls import path

from webhooks import receiver, views

app_name = "webhooks"
urlpatterns = [
    path("in/<uuid:receiver_id>/", receiver.webhook_receive, name="receive"),
    path("", views.endpoint_list, name="endpoints"),
    path("endpoints/<int:environment_pk>/register/", views.endpoint_register, name="register"),
    path("endpoints/<int:environment_pk>/rotate/", views.endpoint_rotate, name="rotate"),
    path("events/", views.event_list, name="events"),
    path("events/reprocess/", views.events_reprocess, name="events_reprocess"),
    path("events/runs/<int:pk>/", views.reprocess_progress, name="reprocess_progress"),
    path("events/<int:pk>/", views.event_detail, name="event"),
    path("events/<int:pk>/row/", views.event_row, name="event_row"),
    path("events/<int:pk>/reprocess/", views.event_reprocess, name="event_reprocess"),
    path("deliveries/<int:pk>/", views.delivery_detail, name="delivery"),
    path("missed/", views.missed_list, name="missed"),
]
