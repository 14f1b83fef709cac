"""The books app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "books.balance_adjusted": _("Balance adjusted"),
    "books.exception_adopted": _("Exception adopted"),
    "books.exception_assigned": _("Exception assigned"),
    "books.exception_commented": _("Exception commented"),
    "books.exception_explained": _("Exception explained"),
    "books.exception_opened": _("Exception opened"),
    "books.exception_refetched": _("Exception fetched again"),
    "books.exception_resolved": _("Exception resolved"),
    "books.exception_state_set": _("Exception state set"),
    "books.exception_updated": _("Exception updated"),
    "books.reconciliation_started": _("Reconciliation started"),
    "books.reconciliation_paused": _("Reconciliation paused"),
    "books.reconciliation_completed": _("Reconciliation completed"),
    "books.reconciliation_failed": _("Reconciliation failed"),
}
