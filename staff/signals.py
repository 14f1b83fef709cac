"""Audit entries for sign-ins, sign-outs and failed sign-ins, and for every Django admin change;
roles synced after every migrate."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.core.exceptions import ObjectDoesNotExist
from django.db.models.signals import post_save
from django.http import HttpRequest

from staff.actions import record_action  # no live page for these records: announce=False
from staff.client_address import client_ip
from staff.models import StaffUser


def _client_ip(request: HttpRequest | None) -> str:
    if request is None:
        return ""
    return client_ip(request)


def on_logged_in(sender: Any, request: HttpRequest, user: StaffUser, **kwargs: Any) -> None:
    record_action(
        actor=user, action="staff.login", details={"ip": _client_ip(request)}, announce=False
    )


def on_logged_out(sender: Any, request: HttpRequest, user: StaffUser | None, **kwargs: Any) -> None:
    if user is not None and user.is_authenticated:
        record_action(
            actor=user, action="staff.logout", details={"ip": _client_ip(request)}, announce=False
        )


def on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    # Django already masks the password in `credentials`; only the attempted email is kept.
    email = str(credentials.get("username") or credentials.get("email") or "")
    record_action(
        actor=None,
        action="staff.login_failed",
        details={"email": email[:254], "ip": _client_ip(request)},
        announce=False,
    )


ADMIN_ACTIONS = {ADDITION: "added", CHANGE: "changed", DELETION: "deleted"}


def on_admin_log_entry(sender: Any, instance: LogEntry, created: bool, **kwargs: Any) -> None:
    """Whatever the Django admin adds, changes or deletes, in any app (a second factor device, a
    schedule, a lockout record...), is in the audit trail as `admin.<added|changed|deleted>`,
    in the admin's transaction, with the form's own account of what changed. (Roles and access
    have their detailed entries with before and after too: staff.admin.StepUpAccessAdmin.)

    The admin writes its log entry before a deletion, so the object is still there to name. A
    bulk delete of several rows logs them with bulk_create, which sends no signal: each
    StepUpAccessAdmin model audits those itself (delete_queryset)."""
    if not created:
        return
    content_type = instance.content_type
    model = f"{content_type.app_label}.{content_type.model}" if content_type else ""
    target = None
    try:
        target = instance.get_edited_object() if content_type else None
    except (ObjectDoesNotExist, AttributeError):  # the row or its model is gone: details name it
        target = None
    record_action(
        actor=instance.user,
        action=f"admin.{ADMIN_ACTIONS.get(instance.action_flag, 'logged')}",
        target=target,
        details={
            "model": model,
            "object_id": instance.object_id or "",
            "object": instance.object_repr,
            "change": instance.get_change_message(),
        },
        announce=False,
    )


def on_post_migrate(sender: AppConfig, using: str, **kwargs: Any) -> None:
    from django.contrib.auth.models import Group
    from django.db import router

    from staff.roles import roles_sync

    # Only where the groups live: another database (the emulator's own, say) has no auth tables.
    if router.allow_migrate_model(using, Group):
        roles_sync(using=using)


def connect() -> None:
    user_logged_in.connect(on_logged_in, dispatch_uid="staff.audit.login")
    user_logged_out.connect(on_logged_out, dispatch_uid="staff.audit.logout")
    user_login_failed.connect(on_login_failed, dispatch_uid="staff.audit.login_failed")
    post_save.connect(on_admin_log_entry, sender=LogEntry, dispatch_uid="staff.audit.admin_log")
