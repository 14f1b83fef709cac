"""Personal API tokens: create (shown once), authenticate a bearer token, revoke."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from staff.models import ApiToken, StaffUser
from staff.roles import has_staff_role
from staff.services import audit_record

TOKEN_PREFIX = "payops_"
# last_used_at is written at most this often per token: a busy integration must not turn every
# API read into a write.
LAST_USED_GRANULARITY = timedelta(minutes=1)


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class NewToken:
    token: ApiToken
    plaintext: str


def api_token_create(*, user: StaffUser, name: str, by: StaffUser | None = None) -> NewToken:
    """A new token for `user` (by themselves, or by a command: `by` None is the system)."""
    if by is not None and by.pk != user.pk:
        raise PermissionDenied("Staff create API tokens for themselves only.")
    if not has_staff_role(user):
        raise PermissionDenied("Only active staff with a role may hold API tokens.")
    name = name.strip() or "API token"
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name[:100], prefix=plaintext[:12], token_hash=_hash(plaintext)
        )
        audit_record(
            actor=by,
            action="staff.api_token_created",
            target=token,
            details={"name": token.name, "prefix": token.prefix, "for": user.email},
        )
    return NewToken(token=token, plaintext=plaintext)


def api_token_revoke(*, token: ApiToken, by: StaffUser) -> ApiToken:
    if token.user_id != by.pk and not by.is_superuser:
        raise PermissionDenied("You can revoke only your own API tokens.")
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().get(pk=token.pk)
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            audit_record(
                actor=by,
                action="staff.api_token_revoked",
                target=token,
                details={"name": token.name, "prefix": token.prefix},
            )
    return token


def api_token_authenticate(raw: str) -> StaffUser | None:
    """The active staff member a bearer token belongs to, or None (unknown, revoked, inactive)."""
    if not raw.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=_hash(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def api_token_list(*, user: StaffUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")
