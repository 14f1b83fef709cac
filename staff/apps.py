"""App configuration for staff: audit signals and session clocks on sign-in, roles after migrate."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = "Staff"

    def ready(self) -> None:
        from staff.audit_action_labels import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from staff import sessions, signals
        from staff.change_kinds import register_staff_change_kinds

        signals.connect()
        sessions.connect()
        register_staff_change_kinds()
        post_migrate.connect(signals.on_post_migrate, sender=self, dispatch_uid="staff.roles")
