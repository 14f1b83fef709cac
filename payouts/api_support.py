"""What the payout endpoints share: the payout of the request (or 404), its upstream wait."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest

from payouts import selectors
from payouts.api_out import payout_out
from payouts.models import Payout
from quotes.api import environment_of


def payout_found(request: HttpRequest, payout_id: int, environment: str | None) -> Payout:
    """The payout in the request's environment (`?environment=` or the caller's), else 404."""
    try:
        return selectors.payout_detail(
            environment=environment_of(request, environment), pk=payout_id
        )
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None


def payout_fresh(request: HttpRequest, payout_id: int, environment: str | None) -> dict[str, Any]:
    """The payout as it now stands, re-read with its documents and timeline."""
    return payout_out(payout_found(request, payout_id, environment))
