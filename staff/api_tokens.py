"""Personal API tokens: create (shown once), authenticate a bearer token, revoke.

A token carries scopes (staff.roles.TOKEN_SCOPES: read, prepare, approve, admin) and an expiry.
Its owner's permissions are narrowed to what the scopes allow (StaffUser.has_perm, through the
Proof the API's auth attaches, `token_proof`). A privileged token (approve or admin) is created
only after step-up, lasts 90 days at most and records when that step-up passed: holding it stands
for that second factor until it expires (staff.step_up).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from staff.actions import record_action  # no live page for these records: announce=False
from staff.errors import ServiceError
from staff.models import ApiToken, StaffUser
from staff.roles import (
    PRIVILEGED_SCOPES,
    SCOPE_PREPARE,
    SCOPE_READ,
    TOKEN_SCOPES,
    has_staff_role,
    scope_permissions,
)
from staff.step_up import TOKEN_SECOND_FACTOR_METHOD, Proof, step_up_require

TOKEN_PREFIX = "payops_"
# last_used_at is written at most this often per token: a busy integration must not turn every
# API read into a write.
LAST_USED_GRANULARITY = timedelta(minutes=1)
DEFAULT_SCOPES: tuple[str, ...] = (SCOPE_READ, SCOPE_PREPARE)
DEFAULT_DAYS = 30
# The lifetimes the profile page offers; the service takes any number of days up to the caps.
DAYS_CHOICES: tuple[int, ...] = (7, 30, 90)
# A token that can approve, release or administer expires within this many days, whatever
# PAYOPS_API_TOKEN_MAX_DAYS says.
PRIVILEGED_MAX_DAYS = 90
SAFE_METHODS = frozenset({"GET", "HEAD"})


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def max_days(scopes: Iterable[str]) -> int:
    """The longest lifetime a token with `scopes` may have."""
    limit = int(getattr(settings, "PAYOPS_API_TOKEN_MAX_DAYS", 365))
    if PRIVILEGED_SCOPES & set(scopes):
        return min(limit, PRIVILEGED_MAX_DAYS)
    return limit


def is_privileged(scopes: Iterable[str]) -> bool:
    return bool(PRIVILEGED_SCOPES & set(scopes))


def read_only(scopes: Iterable[str]) -> bool:
    """A token whose only scope is `read`: GET and HEAD only."""
    return set(scopes) == {SCOPE_READ}


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    plaintext: str


def scopes_within_role(user: StaffUser) -> list[str]:
    """The scopes that give `user` something: those allowing at least one of their permissions.
    A token is never made with another (it would stand for more than its owner may do)."""
    return [
        scope
        for scope, permissions in TOKEN_SCOPES.items()
        if any(user.has_perm(permission) for permission in permissions)
    ]


def default_scopes(user: StaffUser) -> list[str]:
    """DEFAULT_SCOPES, less those beyond the person's roles (an auditor's default is read)."""
    allowed = scopes_within_role(user)
    return [scope for scope in DEFAULT_SCOPES if scope in allowed]


def _refuse_beyond_role(user: StaffUser, chosen: list[str]) -> None:
    allowed = scopes_within_role(user)
    beyond = [scope for scope in chosen if scope not in allowed]
    if beyond:
        raise ServiceError(
            gettext(
                "%(email)s's roles hold no permission of the scope %(scopes)s: a token never "
                "exceeds its owner."
            )
            % {"email": user.email, "scopes": ", ".join(beyond)},
            errors=[
                (
                    "scopes",
                    gettext("beyond this person's roles: %(scopes)s (allowed: %(allowed)s)")
                    % {"scopes": ", ".join(beyond), "allowed": ", ".join(allowed) or "-"},
                )
            ],
            code="scope_beyond_role",
        )


def _clean_scopes(scopes: Iterable[str]) -> list[str]:
    chosen = [str(scope).strip() for scope in scopes]
    unknown = sorted({scope for scope in chosen if scope not in TOKEN_SCOPES})
    if unknown:
        raise ServiceError(
            gettext("Unknown scope %(value)s.") % {"value": ", ".join(unknown)},
            errors=[
                ("scopes", gettext("choose among %(value)s") % {"value": ", ".join(TOKEN_SCOPES)})
            ],
        )
    if not chosen:
        raise ServiceError(
            gettext("Choose at least one scope."),
            errors=[("scopes", gettext("choose at least one"))],
        )
    return [scope for scope in TOKEN_SCOPES if scope in chosen]  # declaration order, once each


def _refuse_days_beyond_scopes(days: int, chosen: list[str]) -> None:
    """A token lasts at least a day and at most what its scopes allow (`max_days`)."""
    longest = max_days(chosen)
    if not 1 <= days <= longest:
        raise ServiceError(
            gettext("A token with these scopes lasts between 1 and %(longest)s days.")
            % {"longest": longest},
            errors=[
                (
                    "days",
                    gettext("at most %(longest)s days for these scopes") % {"longest": longest},
                )
            ],
        )


def api_token_create(
    *,
    user: StaffUser,
    name: str,
    scopes: Iterable[str] | None = None,
    days: int = DEFAULT_DAYS,
    by: StaffUser | None = None,
) -> NewToken:
    """A new token for `user`, by themselves or by the system (`by` None: the operator's
    `manage.py api_token create`, whose shell access stands for the step-up; it is audited as
    such). Every scope must allow one of `user`'s permissions (none beyond their roles, even by
    the operator's break-glass); `scopes` None is `default_scopes(user)`. A privileged scope
    needs a fresh step-up of `by` and at most 90 days."""
    if by is not None and by.pk != user.pk:
        raise PermissionDenied(gettext("Staff create API tokens for themselves only."))
    if not has_staff_role(user):
        raise PermissionDenied(gettext("Only active staff with a role may hold API tokens."))
    chosen = _clean_scopes(default_scopes(user) if scopes is None else scopes)
    _refuse_beyond_role(user, chosen)
    _refuse_days_beyond_scopes(days, chosen)
    privileged = is_privileged(chosen)
    if privileged and by is not None:
        step_up_require(by, action="api_token.create_privileged")
    name = name.strip() or "API token"
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name[:100],
            prefix=plaintext[:12],
            token_hash=_hash(plaintext),
            scopes=chosen,
            expires_at=now + timedelta(days=days),
            stepped_up_at=now if privileged else None,
        )
        record_action(
            actor=by,
            action="staff.api_token_created",
            target=token,
            details={
                "name": token.name,
                "prefix": token.prefix,
                "for": user.email,
                "scopes": chosen,
                "expires_at": token.expires_at.isoformat(),
                # Who vouched for a privileged token: the person's step-up, or the operator.
                "privileged_by": ("step_up" if by is not None else "operator_command")
                if privileged
                else "",
            },
            announce=False,
        )
    return NewToken(token=token, plaintext=plaintext)


def api_token_revoke(*, token: ApiToken, by: StaffUser) -> ApiToken:
    if token.user_id != by.pk and not by.is_superuser:
        raise PermissionDenied(gettext("You can revoke only your own API tokens."))
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().get(pk=token.pk)
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            record_action(
                actor=by,
                action="staff.api_token_revoked",
                target=token,
                details={"name": token.name, "prefix": token.prefix},
                announce=False,
            )
    return token


def api_token_authenticate(raw: str) -> ApiToken | None:
    """The live token a bearer string is (with its active owner), or None: unknown, revoked,
    expired, or its owner inactive."""
    if not raw.startswith(TOKEN_PREFIX):
        return None
    now = timezone.now()
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=_hash(raw), revoked_at__isnull=True, expires_at__gt=now)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def token_proof(token: ApiToken) -> Proof:
    """What a request authenticated by `token` proved: its scopes, and the step-up behind a
    privileged token (attach it to the request's user with staff.step_up.proof_attach)."""
    return Proof(
        method="token",
        second_factor_at=token.stepped_up_at,
        scopes=frozenset(token.scopes),
        permissions=scope_permissions(token.scopes),
        token_id=token.pk,
        second_factor_method=TOKEN_SECOND_FACTOR_METHOD if token.stepped_up_at else "",
    )


def api_token_list(*, user: StaffUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")
