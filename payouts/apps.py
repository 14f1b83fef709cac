"""App configuration for payouts: its panels, schedules, warnings, and its mirror for webhooks."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy


class PayoutsConfig(AppConfig):
    name = "payouts"
    verbose_name = "Payouts"

    def ready(self) -> None:
        from payouts.audit_actions import AUDIT_ACTION_LABELS
        from staff.audit_actions import register_audit_actions

        # What people read for this app's audit actions (the audit pages).
        register_audit_actions(AUDIT_ACTION_LABELS)
        from accounts.recipients import register_recipient_approver_roles
        from console.dashboard import DashboardPanel, register_panel
        from console.health import register_check
        from console.metrics import register_metrics
        from console.schedules import register_schedule
        from console.sentences import register_label_set
        from payouts import tasks
        from payouts.approval.policy import recipient_approver_roles_current
        from payouts.approval.policy_changes import register_policy_change_kinds
        from payouts.approval.views import dashboard_panel_context
        from payouts.models import PayoutStatus
        from payouts.selectors import state_metrics
        from payouts.tracking.catch_up import open_payout_ids, payouts_catch_up
        from payouts.tracking.events import payout_apply_event
        from payouts.tracking.health import quiet_check, quiet_panel_context
        from staff.roles import FINANCE_VIEW
        from webhooks.contract import PAYOUT
        from webhooks.handlers import register_event_handler
        from webhooks.mirrors import Mirror, register_mirror

        # Stored sentences (alerts' summaries, notifications) name a payout's status by its key.
        register_label_set("payout_status", PayoutStatus)

        # Payout events (webhooks) move the payout through its states.
        register_event_handler(PAYOUT, payout_apply_event)

        # After a webhook registration, open payouts are read back first (money first); open
        # ones also tell webhooks when a silence matters.
        register_mirror(
            Mirror(
                "payout",
                "payouts",
                catch_up=payouts_catch_up,
                open_ids=open_payout_ids,
                order=10,
            )
        )
        # A payout quiet past its state's expected time (tracking.quiet): a warning, not a fault.
        register_check(
            "payouts_quiet",
            quiet_check,
            label=gettext_lazy("Quiet payouts"),
            detail_labels={
                "payout": gettext_lazy("Payout"),
                "quiet": gettext_lazy("Quiet"),
                "quiet_for": gettext_lazy("Quiet for"),
                "expected": gettext_lazy("Expected within"),
                "more": gettext_lazy("More"),
                "type": gettext_lazy("Type"),
            },
        )
        register_metrics("payouts.states", state_metrics)
        register_panel(
            DashboardPanel(
                "payouts.quiet",
                "payouts/includes/quiet_panel.html",
                permission=FINANCE_VIEW,
                context=quiet_panel_context,
            )
        )

        # Waiting for me, my drafts returned, failures and returns (also sent by email).
        register_panel(
            DashboardPanel(
                "payouts.notifications",
                "payouts/includes/dashboard_panel.html",
                permission=FINANCE_VIEW,
                context=dashboard_panel_context,
            )
        )

        # Publishing the approval policy is an admin change (staff.changes).
        register_policy_change_kinds()

        # Who may approve a recipient (accounts' dual control): the approval policy's list, or
        # accounts' own setting while the policy names none.
        register_recipient_approver_roles(recipient_approver_roles_current)

        # Expiry housekeeping of the 15-minute quotes reserved by a payout preview.
        register_schedule("payouts.expire_reservations", tasks.expire_due_reservations, minutes=1)
        # Exactly-once recovery: a payout stuck in `submitting` is re-sent with its own key.
        register_schedule("payouts.recover_submitting", tasks.recover_submitting, minutes=1)
        # Webhooks first; polling is the safety net (background budget).
        register_schedule("payouts.poll", tasks.poll_payouts, minutes=5)
