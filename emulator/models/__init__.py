"""Models of the emulator: its edge (clients, clock, faults, idempotency) and its domain."""

from emulator.models.domain import (  # noqa: F401
    DeliveryAttempt,
    EmulatedUser,
    MailboxMessage,
    OtpCode,
    Payout,
    Quote,
    QuoteStatus,
    Recipient,
    VirtualAccount,
    WebhookDelivery,
    WebhookEvent,
    WebhookRegistration,
)
from emulator.models.edge import (  # noqa: F401
    ApiClient,
    ClockState,
    Environment,
    FaultSettings,
    IdempotencyRecord,
    WeeklyUsage,
)
