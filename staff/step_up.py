"""How a request proved who it is, and step-up: a fresh second factor before a sensitive action.

Every request's user carries a `Proof` (attached by `staff.middleware.proof_middleware` for a
browser session, by the API's token auth for a bearer token). Services that move money or change
who may do so call `step_up_require(by, action=...)` first, so the rule holds on a page, on the API
and from a command alike; a user with no proof attached (a script, a test that did not sign in)
has not stepped up.

- **Session:** the proof's `second_factor_at` is when this session last verified a second factor
  (sign-in or a step-up prompt); it is fresh for `settings.PAYOPS_STEP_UP_MINUTES`.
- **Token:** a token that may approve, release or administer is created only after a step-up and
  expires within 90 days (staff.api_tokens); its proof's `second_factor_at` is that step-up, and
  holding the token stands for it until the token expires. A token without such a scope has none.

The proof also says which second factor it was (`second_factor_method`: `totp`, `passkey`,
`recovery_code` for a session, `api_token` for a token's step-up), so an approval can record it
(the evidence pack shows it per approval).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext

from staff.errors import ServiceError

# The session key holding when this session last verified a second factor (ISO 8601, UTC).
SECOND_FACTOR_AT_SESSION_KEY = "payops_second_factor_at"
# Beside it: which kind of second factor that was (totp, passkey, recovery_code).
SECOND_FACTOR_METHOD_SESSION_KEY = "payops_second_factor_method"
SECOND_FACTOR_METHODS = ("totp", "passkey", "recovery_code")
# The method a token's proof names: its owner's step-up when the token was created.
TOKEN_SECOND_FACTOR_METHOD = "api_token"
_PROOF_ATTRIBUTE = "_payops_proof"


@dataclass(frozen=True)
class Proof:
    """What the current request proved: how it signed in, and when a second factor last passed."""

    method: Literal["session", "token"]
    second_factor_at: datetime | None = None
    # None: everything the person may do (a session); otherwise the token's scopes, and the
    # permissions they allow (StaffUser.has_perm keeps the person's own within these).
    scopes: frozenset[str] | None = None
    permissions: frozenset[str] | None = None
    token_id: int | None = None
    # Which second factor `second_factor_at` was: one of SECOND_FACTOR_METHODS, or "api_token".
    second_factor_method: str = ""


class StepUpRequired(ServiceError):
    """The action needs a fresh second factor: a page sends the person to the step-up prompt."""

    status = 403

    def __init__(self, action: str, message: str | None = None) -> None:
        super().__init__(
            message
            or (
                gettext(
                    "Confirm it is you with your second factor first: this action needs one "
                    "verified in the last %(value)s minutes."
                )
                % {"value": step_up_minutes()}
            ),
            code="step_up_required",
        )
        self.action = action


def step_up_minutes() -> int:
    return int(getattr(settings, "PAYOPS_STEP_UP_MINUTES", 5))


def proof_attach(user: object, proof: Proof) -> None:
    """Record on this request's user object what the request proved (never saved anywhere)."""
    setattr(user, _PROOF_ATTRIBUTE, proof)


def proof_of(user: object) -> Proof | None:
    return getattr(user, _PROOF_ATTRIBUTE, None)


def step_up_fresh(user: object, *, now: datetime | None = None) -> bool:
    """Whether the user's current proof includes a second factor recent enough for step-up."""
    proof = proof_of(user)
    if proof is None or proof.second_factor_at is None:
        return False
    if proof.method == "token":
        return True  # the token was created after a step-up and expires within 90 days
    now = now or timezone.now()
    return now - proof.second_factor_at <= timedelta(minutes=step_up_minutes())


def step_up_require(user: object, *, action: str) -> None:
    """Refuse (StepUpRequired, 403 `step_up_required`) unless a fresh second factor backs `user`."""
    if not step_up_fresh(user):
        raise StepUpRequired(action)
