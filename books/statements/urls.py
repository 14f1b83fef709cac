"""Pages of books.statements (included by books.urls, under /books/)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
