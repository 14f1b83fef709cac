"""Payout pages."""

from django.urls import path

from payouts import views

app_name = "payouts"
urlpatterns = [
    path("", views.payout_list, name="list"),
    path("export.csv", views.payout_export, name="export"),
    path("new/", views.payout_new, name="new"),
    path("<int:pk>/", views.payout_detail, name="detail"),
    path("<int:pk>/edit/", views.payout_edit, name="edit"),
    path("<int:pk>/delete/", views.payout_delete, name="delete"),
    path("<int:pk>/preview/", views.payout_preview_view, name="preview"),
    path("<int:pk>/documents/", views.document_add_view, name="document_add"),
    path(
        "<int:pk>/documents/<int:document_pk>/remove/",
        views.document_remove_view,
        name="document_remove",
    ),
    path("<int:pk>/submit/", views.payout_submit_view, name="submit"),
]
