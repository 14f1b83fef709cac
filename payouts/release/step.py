"""The approver's release step of a fiat payout: where its code stands, decided from plain facts.

`otp_step_decide` is a pure function of `OtpFacts` and the time (as `payouts.approval.rules` decides
approvals): the page, its fragments, the API and the confirm service all read the same answer,
so the words an approver sees are the words the API returns. `otp_facts` reads those facts from
the payout, its audit trail (when each code was sent, what the upstream said of it) and the
environment's other payouts (the upstream keeps one code at a time per client).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext

from payouts.models import Payout, PayoutStatus
from staff.models import AuditEntry

# decisions.md 2: "The code is 6 digits, valid 10 minutes" (used when the answer has no expiry).
OTP_LIFETIME = timedelta(minutes=10)
AUDIT_SENT = "payout.otp_sent"
AUDIT_REFUSED = "payout.initiation_refused"
# The upstream's OTP refusals that end a code (INVALID_OTP only costs a try: PayOps counts them).
ENDS_THE_CODE = ("OTP_EXPIRED", "OTP_BLOCKED", "OTP_REQUIRED")


class OtpState(StrEnum):
    NO_EMAIL = "no_email"  # the environment has no verification email: nothing can be sent
    NOT_SENT = "not_sent"
    SENT = "sent"
    WRONG_CODE = "wrong_code"  # sent, and at least one wrong code entered; tries remain
    BLOCKED = "blocked"  # no try left
    EXPIRED = "expired"
    REPLACED = "replaced"  # a later code (any payout's) replaced it, or the upstream has none
    CHECKING = "checking"  # entered: the upstream checks it as it receives the payout


@dataclass(frozen=True)
class OtpFacts:
    verification_email: str
    sent_to: str
    sent_at: datetime | None
    codes_sent: int
    expires_at: datetime | None
    failed_attempts: int
    max_tries: int
    submitting: bool
    refusal: str = ""  # the upstream's code that ended the current code ("" when none did)
    replaced_by: int | None = None  # a payout whose code was sent after this one's


@dataclass(frozen=True)
class OtpStep:
    state: OtpState
    sent_to: str  # masked: the step is read by every payout reader
    sent_at: datetime | None
    expires_at: datetime | None
    tries_left: int
    max_tries: int
    codes_sent: int
    error_code: str  # stable for API clients; "" when nothing is wrong
    message: str  # what happened and what to do next, in plain words
    replaced_by: int | None = None

    @property
    def can_send(self) -> bool:
        return self.state not in (OtpState.NO_EMAIL, OtpState.CHECKING)

    @property
    def can_confirm(self) -> bool:
        return self.state in (OtpState.SENT, OtpState.WRONG_CODE)

    @property
    def tone(self) -> str:
        """The badge tone of the state (docs/ui.md), also the tone of its message."""
        if self.state in (OtpState.BLOCKED, OtpState.NO_EMAIL, OtpState.WRONG_CODE):
            return "error"
        if self.state in (OtpState.EXPIRED, OtpState.REPLACED):
            return "warning"
        return "muted" if self.state == OtpState.NOT_SENT else "info"


LABELS = {
    OtpState.NO_EMAIL: "no verification email",
    OtpState.NOT_SENT: "not sent yet",
    OtpState.SENT: "code sent",
    OtpState.WRONG_CODE: "wrong code",
    OtpState.BLOCKED: "blocked",
    OtpState.EXPIRED: "expired",
    OtpState.REPLACED: "replaced",
    OtpState.CHECKING: "checking",
}


def mask_email(email: str) -> str:
    """`payout-otp@payops.test` as `p•••@payops.test`: enough to recognise, not to harvest."""
    local, at, domain = (email or "").partition("@")
    if not at:
        return "•••" if email else ""
    return f"{local[:1]}•••@{domain}"


def _tries(count: int) -> str:
    return f"{count} {'try' if count == 1 else 'tries'}"


def _state(facts: OtpFacts, now: datetime, tries_left: int) -> OtpState:
    if facts.submitting:
        return OtpState.CHECKING
    if facts.expires_at is None:
        return OtpState.NOT_SENT if facts.verification_email else OtpState.NO_EMAIL
    if facts.refusal == "OTP_BLOCKED" or tries_left == 0:
        return OtpState.BLOCKED
    if facts.refusal == "OTP_EXPIRED" or now >= facts.expires_at:
        return OtpState.EXPIRED
    if facts.refusal == "OTP_REQUIRED" or facts.replaced_by is not None:
        return OtpState.REPLACED
    return OtpState.WRONG_CODE if facts.failed_attempts else OtpState.SENT


def _message(state: OtpState, facts: OtpFacts, tries_left: int) -> tuple[str, str]:
    """The state's stable error code and its sentence: what happened, then what to do next."""
    minutes = int(OTP_LIFETIME.total_seconds() // 60)
    to = mask_email(facts.sent_to or facts.verification_email)
    match state:
        case OtpState.NO_EMAIL:
            return "no_verification_email", (
                gettext(
                    "This environment has no verification email, so no code can be sent. "
                    "An admin sets it on the environment; then send the code here."
                )
            )
        case OtpState.NOT_SENT:
            return "otp_not_sent", (
                gettext(
                    "Send the code to %(to)s: it is valid %(minutes)s minutes and allows "
                    "%(max_tries)s."
                )
                % {"to": to, "minutes": minutes, "max_tries": _tries(facts.max_tries)}
            )
        case OtpState.SENT:
            return "", gettext("Enter the 6-digit code sent to %(to)s.") % {"to": to}
        case OtpState.WRONG_CODE:
            return "otp_wrong", (
                gettext("Wrong code: %(tries_left)s left. Enter the code from the newest email.")
                % {"tries_left": _tries(tries_left)}
            )
        case OtpState.BLOCKED:
            return "otp_blocked", (
                f"{facts.max_tries} wrong codes: this code is blocked (0 tries left). Send a new "
                f"code: it replaces this one and gives {_tries(facts.max_tries)} again. Enter the "
                "code from the newest email only."
            )
        case OtpState.EXPIRED:
            return "otp_expired", (
                gettext("The code expired (a code lasts %(minutes)s minutes). Send a new one.")
                % {"minutes": minutes}
            )
        case OtpState.REPLACED:
            why = (
                f"a code sent later for payout #{facts.replaced_by} replaced it"
                if facts.replaced_by is not None
                else "the upstream holds no pending code (it was used or replaced)"
            )
            return "otp_replaced", (
                gettext(
                    "This code no longer works: %(why)s; the upstream keeps one code at a time. "
                    "Send a new code."
                )
                % {"why": why}
            )
        case OtpState.CHECKING:
            return "", (
                gettext(
                    "Code entered: the payout is on its way, and the upstream checks the code as "
                    "it "
                    "receives it."
                )
            )


def otp_step_decide(facts: OtpFacts, *, now: datetime) -> OtpStep:
    """Where the code stands and what the approver does next (pure: facts and time in)."""
    tries_left = max(0, facts.max_tries - facts.failed_attempts)
    state = _state(facts, now, tries_left)
    if state == OtpState.BLOCKED:
        tries_left = 0
    error_code, message = _message(state, facts, tries_left)
    return OtpStep(
        state=state,
        sent_to=mask_email(facts.sent_to or facts.verification_email),
        sent_at=facts.sent_at,
        expires_at=facts.expires_at,
        tries_left=tries_left,
        max_tries=facts.max_tries,
        codes_sent=facts.codes_sent,
        error_code=error_code,
        message=message,
        replaced_by=facts.replaced_by if state == OtpState.REPLACED else None,
    )


def otp_step_applies(payout: Payout) -> bool:
    """A fiat payout approved and not yet answered by the upstream has a release step."""
    if payout.mode != "fiat" or payout.upstream_id:
        return False
    return payout.status in (PayoutStatus.APPROVED, PayoutStatus.SUBMITTING)


def otp_facts(payout: Payout) -> OtpFacts:
    """The step's facts: the payout's fields, its audit trail, the environment's later codes."""
    sent_at: datetime | None = None
    codes_sent = 0
    refusal = ""
    entries = (
        AuditEntry.objects.filter(
            target_type=Payout._meta.label_lower,
            target_id=str(payout.pk),
            action__in=(AUDIT_SENT, AUDIT_REFUSED),
        )
        .order_by("at", "pk")
        .values_list("action", "at", "details")
    )
    for action, at, details in entries:
        if action == AUDIT_SENT:
            sent_at, codes_sent, refusal = at, codes_sent + 1, ""
        elif sent_at is not None and (details or {}).get("code") in ENDS_THE_CODE:
            refusal = str(details["code"])
    replaced_by = None
    if payout.otp_expires_at is not None:
        # The upstream keeps one code per client: any later code in this environment ends ours.
        replaced_by = (
            Payout.objects.filter(
                environment_id=payout.environment_id,
                otp_expires_at__gt=payout.otp_expires_at,
            )
            .exclude(pk=payout.pk)
            .order_by("-otp_expires_at")
            .values_list("pk", flat=True)
            .first()
        )
    return OtpFacts(
        verification_email=payout.environment.verification_email,
        sent_to=payout.otp_sent_to,
        sent_at=sent_at,
        codes_sent=codes_sent,
        expires_at=payout.otp_expires_at,
        failed_attempts=payout.otp_failed_attempts,
        max_tries=settings.PAYOUTS_OTP_MAX_TRIES,
        submitting=payout.status == PayoutStatus.SUBMITTING,
        refusal=refusal,
        replaced_by=replaced_by,
    )


def otp_step(payout: Payout, *, now: datetime | None = None) -> OtpStep | None:
    """The release step of this payout now, or None when it has none (crypto, not approved…)."""
    if not otp_step_applies(payout):
        return None
    return otp_step_decide(otp_facts(payout), now=now or timezone.now())
