"""Models of the authentication response."""

from __future__ import annotations

from gateway.schemas.common import UpstreamModel


class AccessToken(UpstreamModel):
    access_token: str
    expires_in: int
    token_type: str = "Bearer"

    def __repr__(self) -> str:  # a token never reaches a log line through repr()
        return f"AccessToken(expires_in={self.expires_in}, token_type={self.token_type!r})"

    __str__ = __repr__
