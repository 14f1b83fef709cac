"""Models of payouts, one module a concept: the payout (`payout`), its supporting documents
(`documents`), its status timeline and upstream events (`timeline`), and the approval records
(`approval`). Every model and choice is importable from `payouts.models` itself."""

from __future__ import annotations

from payouts.models.approval import (
    Approval,
    ApprovalPolicy,
    ApprovalRule,
    NotificationKind,
    PayoutNotification,
    chain_from_json,
    chain_to_json,
    limit_from_json,
    limit_to_json,
)
from payouts.models.documents import (
    DocumentKind,
    PayoutDocument,
    PayoutDocumentView,
    document_path,
)
from payouts.models.payout import (
    INTERNAL_NOTES_MAX,
    MEMO_MAX,
    REFERENCE_MAX,
    Payout,
    PayoutChannel,
    PayoutMode,
    PayoutStatus,
    ReservationStatus,
    UpstreamWait,
)
from payouts.models.timeline import (
    ChangeSource,
    PayoutEvent,
    PayoutStatusChange,
)

__all__ = [
    "INTERNAL_NOTES_MAX",
    "MEMO_MAX",
    "REFERENCE_MAX",
    "Approval",
    "ApprovalPolicy",
    "ApprovalRule",
    "ChangeSource",
    "DocumentKind",
    "NotificationKind",
    "Payout",
    "PayoutChannel",
    "PayoutDocument",
    "PayoutDocumentView",
    "PayoutEvent",
    "PayoutMode",
    "PayoutNotification",
    "PayoutStatus",
    "PayoutStatusChange",
    "ReservationStatus",
    "UpstreamWait",
    "chain_from_json",
    "chain_to_json",
    "document_path",
    "limit_from_json",
    "limit_to_json",
]
