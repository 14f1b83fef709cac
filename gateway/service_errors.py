"""Upstream failures (the gateway's error family) as the ServiceError pages and the API show."""

from __future__ import annotations

from collections.abc import Mapping

from gateway import errors as upstream
from staff.errors import FieldProblem, ServiceError, UpstreamUnavailable


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
            "PayOps could not sign in to the upstream: an admin must check this environment's "
            "credentials.",
            code="upstream_credentials",
            status=502,
        )
    if isinstance(exc, upstream.TemporaryError | upstream.BudgetExhausted):
        return UpstreamUnavailable(
            f"The upstream did not answer {what} ({exc}). Nothing was lost: submit it again.",
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
            f"The upstream refused {what}: {exc.message or exc.code}",
            code=(exc.code or "upstream_refused").lower(),
            errors=problems,
            status=404 if isinstance(exc, upstream.NotFoundError) and not problems else 400,
        )
    raise TypeError(f"not an upstream error: {exc!r}")
