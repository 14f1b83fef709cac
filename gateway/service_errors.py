"""Upstream failures (the gateway's error family) as the ServiceError pages and the API show."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext

from gateway import errors as upstream
from staff.errors import FieldProblem, ServiceError, UpstreamUnavailable


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def unanswered(exc: upstream.UpstreamError) -> str:
    """
    What happened, for a person, without the upstream's jargon: "The upstream did not answer
    twice", "The upstream failed 4 times (last: HTTP 500)", "The upstream's rate limit refused
    the call 4 times", or why PayOps held the call back. The caller adds what it means and what
    to do next.
    """
    if isinstance(exc, upstream.BudgetExhausted):
        return gettext("PayOps held the call back (%(message)s)") % {"message": exc.message}
    times = _times(exc.attempts)
    if isinstance(exc, upstream.RateLimited):
        return gettext("The upstream's rate limit refused the call %(times)s") % {"times": times}
    if isinstance(exc, upstream.ServerError):
        return gettext("The upstream failed %(times)s (last: HTTP %(status)s)") % {
            "times": times,
            "status": exc.status,
        }
    if isinstance(exc, upstream.UpstreamTimeout) and exc.code == "timeout":
        return gettext("The upstream did not answer in time, %(times)s") % {"times": times}
    return gettext("The upstream did not answer %(times)s") % {"times": times}


def service_error_from_upstream(
    exc: Exception, *, rename: Mapping[str, str] | None = None, what: str = "the request"
) -> ServiceError:
    """
    An upstream failure (gateway.errors) as the ServiceError the API and forms show: the
    upstream's field errors renamed to ours (`user_id` -> `end_user_id`), a refusal as 400, no
    answer as 503 (nothing was created; submit again), wrong credentials as 502.
    """
    rename = rename or {}
    if isinstance(exc, upstream.AuthenticationError):
        return ServiceError(
            gettext(
                "PayOps could not sign in to the upstream: an admin must check this environment's "
                "credentials."
            ),
            code="upstream_credentials",
            status=502,
        )
    if isinstance(exc, upstream.TemporaryError | upstream.BudgetExhausted):
        return UpstreamUnavailable(
            f"{unanswered(exc)} for {what}. Nothing was lost: submit it again in a minute.",
            code="upstream_unavailable",
        )
    if isinstance(exc, upstream.UpstreamError):
        problems = []
        for item in exc.field_errors:
            head, _, rest = item.field.partition(".")
            name = rename.get(item.field) or (
                f"{rename[head]}.{rest}"
                if rest and head in rename
                else rename.get(head, item.field)
            )
            problems.append(FieldProblem(name or "body", item.message))
        return ServiceError(
            gettext("The upstream refused %(what)s: %(value)s")
            % {"what": what, "value": exc.message or exc.code},
            code=(exc.code or "upstream_refused").lower(),
            errors=problems,
            status=404 if isinstance(exc, upstream.NotFoundError) and not problems else 400,
        )
    raise TypeError(f"not an upstream error: {exc!r}")
