"""The users app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "end_user.created": _("End user created"),
    "end_user.updated": _("End user changed"),
    "end_user.refreshed": _("End user refreshed from the upstream"),
    "end_user.event.": _("End user: upstream event"),
    "end_user.kyc_note": _("KYC note added"),
    "end_user.kyc_reviewed": _("KYC marked reviewed"),
}
