"""Pages of alerts under /alerts/."""

from django.urls import path

from alerts import views

app_name = "alerts"
urlpatterns = [
    path("", views.history, name="history"),
    path("<int:pk>/acknowledge/", views.acknowledge, name="acknowledge"),
    path("rules/", views.rule_list, name="rules"),
    path("rules/new/", views.rule_new, name="rule_new"),
    path("rules/<int:pk>/edit/", views.rule_edit, name="rule_edit"),
    path("rules/<int:pk>/toggle/", views.rule_toggle, name="rule_toggle"),
    path("subscriptions/", views.subscriptions, name="subscriptions"),
]
