"""Staff middleware: the session's proof of identity attached to request.user, lazily."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from django.contrib.auth import get_user
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from staff.step_up import SECOND_FACTOR_AT_SESSION_KEY, Proof, proof_attach


def session_proof(request: HttpRequest) -> Proof:
    """The proof a browser session holds: when (if ever) it last verified a second factor."""
    raw = request.session.get(SECOND_FACTOR_AT_SESSION_KEY)
    at = None
    if isinstance(raw, str):
        try:
            at = datetime.fromisoformat(raw)
        except ValueError:
            at = None
    return Proof(method="session", second_factor_at=at)


def proof_middleware(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable[..., object]:
    """Replace request.user (after AuthenticationMiddleware) by one that carries its Proof.

    Lazy like Django's own: a request that never looks at its user (the webhook receiver, static
    files) loads no session and no user.
    """

    def load(request: HttpRequest) -> object:
        user = get_user(request)
        if user.is_authenticated:
            proof_attach(user, session_proof(request))
        return user

    def middleware(request: HttpRequest) -> HttpResponse:
        request.user = SimpleLazyObject(lambda: load(request))  # type: ignore[assignment]
        return get_response(request)

    return middleware
