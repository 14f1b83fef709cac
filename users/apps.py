"""App configuration for users: its event handler and mirror for webhooks' catch-up."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class UsersConfig(AppConfig):
    name = "users"
    verbose_name = gettext_lazy("End users")

    def ready(self) -> None:
        from staff.actions import register_announcer
        from staff.audit_actions import register_audit_actions
        from users.audit_actions import AUDIT_ACTION_LABELS

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from users.catch_up import end_users_catch_up
        from users.events import end_user_apply_event
        from users.live import mirror_changed
        from users.models import EndUser, UpstreamMirror
        from webhooks.contract import USER
        from webhooks.handlers import register_event_handler
        from webhooks.links import register_link_target
        from webhooks.mirrors import Mirror, register_mirror

        # Every mirrored record (end user, virtual account, recipient) tells its pages it changed.
        register_announcer(UpstreamMirror, mirror_changed)

        # End-user and KYC events (webhooks) keep the mirror current.
        register_event_handler(USER, end_user_apply_event)
        # Events that name a user link to its end user.
        register_link_target(USER, EndUser)

        # After a webhook registration, users still waiting for a KYC decision are read back.
        register_mirror(Mirror("user", "end users", catch_up=end_users_catch_up, order=30))
