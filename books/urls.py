"""The books' pages under /books/: reconciliation and its exceptions; statements and reports."""

from books.reconciliation import urls as reconciliation
from books.statements import urls as statements

app_name = "books"
urlpatterns = [*reconciliation.urlpatterns, *statements.urlpatterns]
