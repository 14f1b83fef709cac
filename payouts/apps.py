"""App configuration for payouts: what it registers with the apps below it, one function a
registry owner (webhooks; the console's panels, checks and metrics; accounts and staff; the
schedules), so each group reads on its own."""

from django.apps import AppConfig
from django.utils.translation import gettext_lazy


def _webhooks_registrations() -> None:
    from payouts.models import Payout
    from payouts.tracking.catch_up import open_payout_ids, payouts_catch_up
    from payouts.tracking.events import payout_apply_event
    from webhooks.contract import PAYOUT
    from webhooks.handlers import register_event_handler
    from webhooks.links import register_link_target
    from webhooks.mirrors import Mirror, register_mirror

    # Payout events (webhooks) move the payout through its states.
    register_event_handler(PAYOUT, payout_apply_event)
    # Events that name a payout link to it.
    register_link_target(PAYOUT, Payout)
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


def _action_registrations() -> None:
    from console.sentences import register_label_set
    from payouts.audit_actions import AUDIT_ACTION_LABELS
    from payouts.live import payout_changed
    from payouts.models import Payout, PayoutStatus
    from staff.actions import register_announcer
    from staff.audit_actions import register_audit_actions
    from staff.crypto import register_encrypted_fields

    # What people read for this app's audit actions (the audit pages).
    register_audit_actions(AUDIT_ACTION_LABELS)
    # Stored sentences (alerts' summaries, notifications) name a payout's status by its key.
    register_label_set("payout_status", PayoutStatus)

    # Every action on a payout tells its open pages (staff.actions).
    register_announcer(Payout, payout_changed)
    # The upstream's release code, re-encrypted by gateway_rotate_key with every other secret.
    register_encrypted_fields(Payout, "otp_code_encrypted")


def _console_registrations() -> None:
    from console.dashboard import DashboardPanel, register_panel
    from console.health import register_check
    from console.metrics import register_metrics
    from payouts.approval.views import dashboard_panel_context
    from payouts.selectors import state_metrics
    from payouts.tracking.health import polling_late_check, quiet_check, quiet_panel_context
    from staff.roles import FINANCE_VIEW

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
    # Open payouts polling reads later than their state's cadence (its allowance is short).
    register_check("payouts_polling", polling_late_check, label=gettext_lazy("Payout polling"))
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


def _policy_registrations() -> None:
    from accounts.recipients import register_recipient_approver_roles
    from payouts.approval.policy import recipient_approver_roles_current
    from payouts.approval.policy_changes import register_policy_change_kinds

    # Publishing the approval policy is an admin change (staff.changes).
    register_policy_change_kinds()
    # Who may approve a recipient (accounts' dual control): the approval policy's list, or
    # accounts' own setting while the policy names none.
    register_recipient_approver_roles(recipient_approver_roles_current)


def _schedule_registrations() -> None:
    from console.schedules import register_schedule
    from payouts import tasks

    # Expiry housekeeping of the 15-minute quotes reserved by a payout preview.
    register_schedule("payouts.expire_reservations", tasks.expire_due_reservations, minutes=1)
    # Exactly-once recovery: a payout stuck in `submitting` is re-sent with its own key.
    register_schedule("payouts.recover_submitting", tasks.recover_submitting, minutes=1)
    # Webhooks first; polling is the safety net (background budget).
    register_schedule("payouts.poll", tasks.poll_payouts, minutes=5)


class PayoutsConfig(AppConfig):
    name = "payouts"
    verbose_name = "Payouts"

    def ready(self) -> None:
        _action_registrations()
        _webhooks_registrations()
        _console_registrations()
        _policy_registrations()
        _schedule_registrations()
