"""Staff writes that belong to no narrower module: the language each person chooses."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied

from staff.actions import act
from staff.errors import ServiceError
from staff.models import StaffUser


def staff_language_set(*, user: StaffUser, language: str, by: StaffUser) -> StaffUser:
    """The language the back office speaks to `user` (pages, emails): a code of
    settings.LANGUAGES, or "" for the browser's. Each person chooses their own."""
    if by.pk != user.pk:
        raise PermissionDenied("Each person chooses their own language.")
    if not user.is_active:
        raise PermissionDenied("An inactive account has no language to choose.")
    codes = [code for code, _name in settings.LANGUAGES]
    if language not in ("", *codes):
        raise ServiceError(
            "Choose one of the offered languages.",
            errors=[("language", f"one of {', '.join(codes)}, or empty for the browser's")],
        )
    # A person's own settings have no live page: nothing to announce.
    with act(
        actor=by, action="staff.language_set", target=user, fields=["language"], announce=False
    ) as a:
        locked = a.target
        if locked.language == language:
            a.nothing_changed()
        else:
            locked.language = language
            locked.save(update_fields=["language"])
    user.language = language
    return locked
