"""The refusals of the second factor, in the one error shape (staff.errors.ServiceError)."""

from __future__ import annotations

from staff.errors import ServiceError


class SecondFactorRefused(ServiceError):
    """A wrong, reused or throttled code: the error goes on the form's code field."""

    status = 400

    def __init__(self, message: str, *, code: str = "second_factor_invalid") -> None:
        super().__init__(message, code=code, errors=[("code", message)])


class SecondFactorNotAllowed(ServiceError):
    status = 403

    def __init__(self, message: str, *, code: str = "second_factor_not_allowed") -> None:
        super().__init__(message, code=code)
