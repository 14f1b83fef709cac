"""App configuration for the books: its schedules, checks and panels."""

from django.apps import AppConfig


class BooksConfig(AppConfig):
    name = "books"
    verbose_name = "Books"

    def ready(self) -> None:
        # Reconciliation: its daily schedule and its checks (books.reconciliation).

        # Statements and reports (books.statements).
        pass
