"""Models of the emulator: platform (E1) and domain (E2) halves."""

from emulator.models.domain import (  # noqa: F401
    DeliveryAttempt,
    EmulatedUser,
    MailboxMessage,
    OtpCode,
    Payout,
    Recipient,
    VirtualAccount,
    WebhookDelivery,
    WebhookEvent,
    WebhookRegistration,
)
from emulator.models.platform import (  # noqa: F401
    ApiClient,
    ClockState,
    Environment,
    FaultSettings,
    IdempotencyRecord,
    Quote,
    QuoteStatus,
    WeeklyUsage,
)
