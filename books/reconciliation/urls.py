"""Pages of books.reconciliation (included by books.urls, under /books/)."""

from django.urls import URLPattern, path

from books.reconciliation import views

urlpatterns: list[URLPattern] = [
    path("reconciliation/", views.run_list, name="reconciliation"),
    path("reconciliation/start/", views.run_start, name="reconciliation_start"),
    path("reconciliation/runs/<int:pk>/", views.run_detail, name="reconciliation_run"),
    path("exceptions/", views.exception_list, name="exceptions"),
    path("exceptions/<int:pk>/", views.exception_detail, name="exception"),
    path(
        "exceptions/<int:pk>/<slug:action>/",
        views.exception_action,
        name="exception_action",
    ),
]
