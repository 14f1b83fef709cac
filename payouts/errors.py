"""Why a payout action was refused: one exception the pages show and the API maps to a 4xx."""

from __future__ import annotations


class PayoutActionRefused(Exception):
    """
    A staff action the rules do not allow now (state, segregation of duties, OTP). `code` is
    stable for API clients, `field` names the input at fault when there is one, and `status` is
    the HTTP status the API answers with (409 for a state conflict, 400 for bad input, 403 for a
    rule about the person).
    """

    def __init__(self, code: str, message: str, *, field: str = "", status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.status = status
