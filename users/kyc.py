"""KYC review of end users: compliance notes and "reviewed" marks, audited on the timeline."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext

from staff import roles
from staff.actions import record_action
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import require, timeline_add
from users.models import EndUser, KycReview, KycReviewKind


def kyc_note_add(*, end_user: EndUser, by: StaffUser, text: str) -> KycReview:
    return _kyc_review(end_user=end_user, by=by, text=text, kind=KycReviewKind.NOTE)


def kyc_mark_reviewed(*, end_user: EndUser, by: StaffUser, reason: str) -> KycReview:
    return _kyc_review(end_user=end_user, by=by, text=reason, kind=KycReviewKind.REVIEWED)


def _kyc_review(*, end_user: EndUser, by: StaffUser, text: str, kind: str) -> KycReview:
    require(by, roles.KYC_REVIEW)
    text = (text or "").strip()
    if not text:
        field = "reason" if kind == KycReviewKind.REVIEWED else "text"
        raise ServiceError(
            gettext("Say why, in a few words."),
            errors=[(field, gettext("This field is required."))],
        )
    with transaction.atomic():
        end_user = EndUser.objects.select_for_update().get(pk=end_user.pk)
        before = {"reviewed_at": end_user.reviewed_at, "reviewed_by": end_user.reviewed_by_id}
        review = KycReview.objects.create(
            end_user=end_user,
            kind=kind,
            by=by,
            text=text,
            verification_status=end_user.verification_status,
        )
        if kind == KycReviewKind.REVIEWED:
            end_user.reviewed_at = review.at
            end_user.reviewed_by = by
            end_user.save(update_fields=["reviewed_at", "reviewed_by", "updated_at"])
        timeline_add(
            end_user,
            actor=by,
            summary=("Marked reviewed" if kind == KycReviewKind.REVIEWED else "Compliance note")
            + f" by {by.email}: {text}",
        )
        record_action(
            actor=by,
            action=f"end_user.kyc_{kind}",
            target=end_user,
            details={
                "before": before,
                "after": {
                    "reviewed_at": end_user.reviewed_at,
                    "reviewed_by": end_user.reviewed_by_id,
                },
                "text": text,
                "verification_status": end_user.verification_status,
            },
        )
    return review
