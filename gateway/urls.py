"""Gateway pages: environments, switching, the quota gauge and the call log."""

from django.urls import path

from gateway import views

app_name = "gateway"
urlpatterns = [
    path("environments/", views.environment_list, name="environments"),
    path("environments/new/", views.environment_add, name="environment_add"),
    path("environments/choose/", views.environment_choose, name="environment_choose"),
    path("environments/<int:pk>/edit/", views.environment_edit, name="environment_edit"),
    path("environments/<int:pk>/test/", views.environment_test, name="environment_test"),
    path("environments/<int:pk>/switch/", views.environment_switch_view, name="environment_switch"),
    path("quota/", views.quota, name="quota"),
    path("calls/", views.call_log, name="call_log"),
]
