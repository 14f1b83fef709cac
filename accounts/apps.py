"""App configuration for accounts: its schedule, event handler and mirror for webhooks."""

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from accounts.audit_actions import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from accounts.catch_up import virtual_accounts_catch_up
        from accounts.events import virtual_account_apply_event
        from accounts.models import Recipient, VirtualAccount
        from accounts.tasks import virtual_accounts_track_activation
        from console.schedules import register_schedule
        from webhooks.contract import VIRTUAL_ACCOUNT
        from webhooks.handlers import register_event_handler
        from webhooks.links import register_link_target
        from webhooks.mirrors import Mirror, register_mirror

        # Virtual-account events (webhooks) keep the mirror current.
        register_event_handler(VIRTUAL_ACCOUNT, virtual_account_apply_event)
        # Events that name a virtual account or a recipient link to its row.
        register_link_target(VIRTUAL_ACCOUNT, VirtualAccount)
        register_link_target("recipient", Recipient)

        # After a webhook registration, accounts still activating are read back.
        register_mirror(
            Mirror(
                "virtual_account",
                "virtual accounts",
                catch_up=virtual_accounts_catch_up,
                order=20,
            )
        )

        # Activation is tracked to `active` even when no webhook arrives (none registered, or
        # dropped): activating accounts are read back every minute (background priority).
        register_schedule(
            "accounts.track_activation",
            virtual_accounts_track_activation,
            minutes=1,
        )
