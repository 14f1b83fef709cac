"""The gateway's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "environment.created": _("Environment added"),
    "environment.updated": _("Environment changed"),
    "environment.switched": _("Environment chosen"),
    "environment.verified": _("Environment tested"),
}
