"""The payouts app's audit actions, as people read them."""

from django.utils.translation import gettext_lazy as _

# The audit actions this app writes (staff.audit_actions): code -> what a person reads.
AUDIT_ACTION_LABELS = {
    "payout.draft_created": _("Payout draft created"),
    "payout.draft_edited": _("Payout draft changed"),
    "payout.draft_deleted": _("Payout draft deleted"),
    "payout.previewed": _("Payout previewed"),
    "payout.submitted": _("Payout submitted for approval"),
    "payout.approved": _("Payout approved"),
    "payout.rejected": _("Payout rejected"),
    "payout.approval_withdrawn": _("Payout approval withdrawn"),
    "payout.cancelled": _("Payout cancelled"),
    "payout.requoted": _("Payout re-quoted"),
    "payout.otp_sent": _("Payout code sent"),
    "payout.otp_entered": _("Payout code entered"),
    "payout.resend": _("Payout code resent"),
    "payout.submitting": _("Payout sent to the upstream"),
    "payout.initiated": _("Payout accepted by the upstream"),
    "payout.initiation_refused": _("Payout refused by the upstream"),
    "payout.charge_differs": _("Payout charged otherwise than shown"),
    "payout.missed_event": _("Payout event missed"),
    "payout.evidence_downloaded": _("Payout evidence downloaded"),
    "payout.document_viewed": _("Payout document opened"),
    "payouts.adopted": _("Payouts adopted from the upstream"),
    "payouts.reservations_expired": _("Payout reservations expired"),
    "approval_policy.published": _("Approval policy published"),
}
