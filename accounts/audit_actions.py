"""The accounts app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "virtual_account.created": _("Virtual account created"),
    "virtual_account.refreshed": _("Virtual account refreshed from the upstream"),
    "virtual_account.event.": _("Virtual account: upstream event"),
    "recipient.created": _("Recipient created"),
    "recipient.refreshed": _("Recipient refreshed from the upstream"),
    "recipient.event.": _("Recipient: upstream event"),
    "recipient.approved": _("Recipient approved"),
    "recipient.rejected": _("Recipient rejected"),
    "recipient.archived": _("Recipient archived"),
    "recipient.superseded": _("Recipient replaced"),
    "recipient.change_proposed": _("Recipient change proposed"),
    "recipient.change_approved": _("Recipient change approved"),
    "recipient.change_rejected": _("Recipient change rejected"),
}
