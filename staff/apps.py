"""App configuration for staff: audit signals and session clocks on sign-in, roles after migrate."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def register_staff_secrets() -> None:
    """Staff's secrets at rest, for key rotation: authenticator seeds, and admin changes' payloads
    (each kind names its secret keys: staff.changes.register_change_kind)."""
    from staff.changes import proposal_secrets_rotate
    from staff.crypto import register_encrypted_fields
    from staff.models import ChangeProposal
    from staff.second_factor.models import AuthenticatorDevice

    register_encrypted_fields(AuthenticatorDevice, "seed_encrypted")
    register_encrypted_fields(ChangeProposal, rotate_row=proposal_secrets_rotate)


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = "Staff"

    def ready(self) -> None:
        from staff.audit_action_labels import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from staff import checks, sessions, signals  # noqa: F401  (checks registers itself)
        from staff.change_kinds import register_staff_change_kinds

        signals.connect()
        sessions.connect()
        register_staff_change_kinds()
        register_staff_secrets()
        post_migrate.connect(signals.on_post_migrate, sender=self, dispatch_uid="staff.roles")
