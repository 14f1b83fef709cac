"""App configuration for quotes."""

from django.apps import AppConfig


class QuotesConfig(AppConfig):
    name = "quotes"
    verbose_name = "Quotes"

    def ready(self) -> None:
        from quotes.audit_actions import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from console.schedules import register_schedule
        from quotes.models import Quote
        from quotes.tasks import expire_due_quotes
        from webhooks.links import register_link_target

        # Expiry housekeeping: a list filtered by status must not show stale ACTIVE quotes.
        register_schedule("quotes.expire_due", expire_due_quotes, minutes=1)
        # Events that name a quote (in their metadata) link to it.
        register_link_target("quote", Quote)
