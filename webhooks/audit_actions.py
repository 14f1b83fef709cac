"""The webhooks app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "webhooks.caught_up": _("Caught up after registration"),
    "webhooks.reprocess": _("Webhook events reprocessed"),
    "webhooks.secret_rotated": _("Webhook secret rotated"),
    "webhooks.secrets_revealed": _("Webhook secrets revealed"),
}
