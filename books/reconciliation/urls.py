"""Pages of books.reconciliation (included by books.urls, under /books/)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
