"""The alerts app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "alerts.fired": _("Alert opened"),
    "alerts.resolved": _("Alert resolved"),
    "alerts.acknowledged": _("Alert acknowledged"),
    "alerts.rule_created": _("Alert rule created"),
    "alerts.rule_changed": _("Alert rule changed"),
    "alerts.rule_enabled": _("Alert rule switched on or off"),
    "alerts.subscription_changed": _("Alert subscription changed"),
}
