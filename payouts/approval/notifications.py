"""Payout notifications: a dashboard line per person, and the same by email (after commit)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from console.sentences import Summary, amount, summary
from console.templatetags.ui import money
from payouts.approval.rules import ApprovalFacts, approval_decide
from payouts.models import NotificationKind, Payout, PayoutNotification, chain_from_json
from staff.models import StaffUser
from staff.roles import PAYOUT_APPROVE

logger = logging.getLogger("payouts")


def _approvers_for(payout: Payout) -> list[StaffUser]:
    """Everyone who may approve it now: the pure decision for each active person (the approver
    permission, or the role the chain's current step names), so the SoD rules exclude the maker,
    the recipient's creator and who approved or withdrew in this round."""
    rows = list(
        payout.approvals.filter(round=payout.approval_round)
        .order_by("created_at", "pk")
        .values_list("approver_id", "step", "voided_at")
    )
    facts = ApprovalFacts(
        pending=True,
        maker_id=payout.maker_id,
        recipient_creator_id=payout.recipient.created_by_id,
        approver_ids=[who for who, _, voided in rows if voided is None],
        required=payout.approvals_required,
        chain=chain_from_json(payout.approval_chain),
        approval_steps=[step for _, step, voided in rows if voided is None],
        withdrawn_ids=[who for who, _, voided in rows if voided is not None],
    )
    people = StaffUser.objects.filter(is_active=True).prefetch_related("groups")
    return [
        person
        for person in people
        if approval_decide(
            facts,
            approver_id=person.pk,
            has_permission=person.has_perm(PAYOUT_APPROVE),
            roles=frozenset(group.name for group in person.groups.all()),
        ).allowed
    ]


def notify(*, payout: Payout, kind: str, people: Iterable[StaffUser], message: Summary) -> None:
    """Record one notification per person now; send the emails once the change has committed.

    `message` is kept as its English record and as message and parameters, read in each
    reader's language (`PayoutNotification.text()`), as alerts keep their summaries."""
    english, stored = message.english()[:300], message.as_json()
    rows = PayoutNotification.objects.bulk_create(
        PayoutNotification(
            recipient=person, payout=payout, kind=kind, message=english, message_json=stored
        )
        for person in people
    )
    ids = [row.pk for row in rows]
    if ids:
        transaction.on_commit(lambda: notifications_email(ids=ids))


def notifications_email(*, ids: list[int]) -> int:
    """Email the given notifications (Django's email backend; the console in development)."""
    sent = 0
    rows = PayoutNotification.objects.filter(pk__in=ids, emailed_at__isnull=True).select_related(
        "recipient", "payout"
    )
    for row in rows:
        with translation.override(row.recipient.language or settings.LANGUAGE_CODE):
            subject, body = _email_text(row)
        try:
            send_mail(
                subject=subject,
                message=body,
                from_email=settings.DEFAULT_FROM_EMAIL,
                recipient_list=[row.recipient.email],
            )
        except Exception:  # a mail outage never undoes a payout change; the dashboard has it
            logger.exception("notification %s could not be emailed", row.pk)
            continue
        PayoutNotification.objects.filter(pk=row.pk).update(emailed_at=timezone.now())
        sent += 1
    return sent


# Each kind's opening line in the recipient's language; the notification's own sentence follows
# it, in the same language (the English record where it has no translation).
KIND_LEADS = {
    NotificationKind.WAITING_FOR_APPROVAL: gettext_lazy(
        "Payout %(id)s of %(amount)s %(currency)s waits for your approval."
    ),
    NotificationKind.REJECTED: gettext_lazy("Your payout %(id)s was rejected."),
    NotificationKind.READY_FOR_OTP: gettext_lazy(
        "Payout %(id)s has all its approvals: the code can be sent."
    ),
    NotificationKind.FAILED: gettext_lazy("Payout %(id)s failed."),
    NotificationKind.RETURNED: gettext_lazy("Payout %(id)s was returned."),
    NotificationKind.CHARGE_DIFFERS: gettext_lazy(
        "The upstream charged payout %(id)s differently from what was shown."
    ),
}


def _email_text(row: PayoutNotification) -> tuple[str, str]:
    """(subject, body) in the active language. In English the body is the message itself."""
    # The amount written the reader's way (`1.234,56` in es, pt-BR); the currency follows it.
    figure = money(row.payout.amount, row.payout.currency).rsplit(" ", 1)[0]
    facts = {"id": row.payout_id, "amount": figure, "currency": row.payout.currency}
    subject = gettext("PayOps: %(kind)s (payout %(id)s)") % {
        "kind": row.get_kind_display(),
        "id": row.payout_id,
    }
    lead = row.text()
    if not (translation.get_language() or "en").startswith("en"):
        lead = str(KIND_LEADS[NotificationKind(row.kind)]) % facts
        if row.kind != NotificationKind.WAITING_FOR_APPROVAL:
            lead += "\n" + row.text()
    footer = gettext("Payout %(id)s: %(amount)s %(currency)s.") % facts
    return subject, f"{lead}\n\n{footer}"


def notify_waiting_for_approval(payout: Payout) -> None:
    notify(
        payout=payout,
        kind=NotificationKind.WAITING_FOR_APPROVAL,
        people=_approvers_for(payout),
        message=summary(
            gettext_noop("Payout %(id)s of %(amount)s waits for approval."),
            id=payout.pk,
            amount=amount(payout.amount, payout.currency),
        ),
    )


def people_of(payout: Payout) -> list[StaffUser]:
    """Its maker and the people whose approval released it (the current round)."""
    approver_ids = payout.approvals.filter(
        round=payout.approval_round, voided_at__isnull=True
    ).values_list("approver_id", flat=True)
    others = StaffUser.objects.filter(pk__in=list(approver_ids)).exclude(pk=payout.maker_id)
    return [payout.maker, *others.order_by("pk")]


def notify_maker(payout: Payout, kind: str, message: Summary) -> None:
    notify(payout=payout, kind=kind, people=[payout.maker], message=message)


def notifications_unread(user: StaffUser, *, limit: int = 10) -> list[PayoutNotification]:
    return list(
        PayoutNotification.objects.filter(recipient=user, read_at__isnull=True)
        .select_related("payout")
        .order_by("-created_at")[:limit]
    )
