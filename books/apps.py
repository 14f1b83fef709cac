"""App configuration for the books: its schedules, checks and panels."""

from django.apps import AppConfig


class BooksConfig(AppConfig):
    name = "books"
    verbose_name = "Books"

    def ready(self) -> None:
        from books.audit_actions import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        # The live messages of its records (staff.actions queues them with every action).
        from books.reconciliation.live import exception_changed, run_progress
        from books.reconciliation.models import ReconciliationException, ReconciliationRun
        from staff.actions import register_announcer

        register_announcer(ReconciliationRun, run_progress)
        register_announcer(ReconciliationException, exception_changed)
        # Reconciliation: its daily schedule and its checks (books.reconciliation).
        from books.reconciliation import tasks as reconciliation_tasks
        from console.schedules import register_schedule

        register_schedule(
            "books.reconciliation_daily", reconciliation_tasks.reconciliation_daily, every="daily"
        )
        register_schedule(
            "books.reconciliation_resume",
            reconciliation_tasks.reconciliation_resume_due,
            minutes=5,
        )

        # Statements and reports (books.statements).
        pass
