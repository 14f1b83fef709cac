"""What every payout page shares: the payout a URL names, in the person's environment, or 404."""

from __future__ import annotations

from django.http import Http404, HttpRequest

from gateway.selectors import environment_current
from payouts import selectors
from payouts.models import Payout


def payout_of_request(request: HttpRequest, pk: int) -> Payout:
    """The payout `pk` of the environment the person works in (404 elsewhere)."""
    try:
        return selectors.payout_detail(environment=environment_current(user=request.user), pk=pk)
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None
