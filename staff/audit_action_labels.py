"""The staff app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "staff.login": _("Signed in"),
    "staff.login_failed": _("Sign-in failed"),
    "staff.logout": _("Signed out"),
    "staff.session_expired": _("Session expired"),
    "staff.password_changed": _("Password changed"),
    "staff.language_set": _("Language chosen"),
    "staff.demo_user_created": _("Demo person created"),
    "staff.api_token_created": _("API token created"),
    "staff.api_token_revoked": _("API token revoked"),
    "staff.recovery_codes_issued": _("Recovery codes issued"),
    "staff.second_factor_enrolled": _("Second factor enrolled"),
    "staff.second_factor_failed": _("Second factor code refused"),
    "staff.second_factor_removed": _("Second factor removed"),
    "staff.second_factor_verified": _("Second factor confirmed"),
    "staff.second_factor_reset_requested": _("Second factor reset proposed"),
    "staff.second_factor_reset_applied": _("Second factor reset applied"),
    "change.proposed": _("Admin change proposed"),
    "change.applied": _("Admin change applied"),
    "change.rejected": _("Admin change rejected"),
    "change.withdrawn": _("Admin change withdrawn"),
    "change.failed": _("Admin change failed"),
    "role.granted": _("Role granted"),
    "role.changed_in_admin": _("Roles changed in the Django admin"),
    "role.group_changed_in_admin": _("Role group changed in the Django admin"),
    "role.group.created_in_admin": _("Role group created in the Django admin"),
    "role.group.deleted_in_admin": _("Role group deleted in the Django admin"),
    "staff.created_in_admin": _("Staff member created in the Django admin"),
    "staff.deleted_in_admin": _("Staff member deleted in the Django admin"),
    "admin.added": _("Record added in the Django admin"),
    "admin.changed": _("Record changed in the Django admin"),
    "admin.deleted": _("Record deleted in the Django admin"),
    "admin.logged": _("Django admin action"),
}
