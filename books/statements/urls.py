"""Pages of books.statements (included by books.urls, under /books/)."""

from django.urls import URLPattern, path

from books.statements import views

urlpatterns: list[URLPattern] = [
    path("statements/", views.statements_page, name="statements"),
    path("fees/", views.fees_report_page, name="fees_report"),
    path("receipts/<int:pk>/", views.receipt_download, name="receipt"),
]
