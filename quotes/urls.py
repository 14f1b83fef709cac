"""Quote pages."""

from django.urls import path

from quotes import views

app_name = "quotes"
urlpatterns = [
    path("", views.quote_list, name="list"),
    path("new/", views.quote_new, name="new"),
    path("<int:pk>/", views.quote_detail, name="detail"),
    path("<int:pk>/amount/", views.quote_amount, name="amount"),
    path("<int:pk>/recheck/", views.quote_recheck_view, name="recheck"),
]
