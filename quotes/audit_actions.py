"""The quotes app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "quote.requested": _("Quote requested"),
    "quote.repriced": _("Quote repriced"),
    "quote.status_changed": _("Quote status changed"),
    "quotes.expired": _("Quotes expired"),
}
