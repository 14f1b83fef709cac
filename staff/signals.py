"""Audit entries for sign-ins, sign-outs and failed sign-ins; roles synced after every migrate."""

from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.http import HttpRequest

from staff.client_address import client_ip
from staff.models import StaffUser
from staff.services import audit_record


def _client_ip(request: HttpRequest | None) -> str:
    if request is None:
        return ""
    return client_ip(request)


def on_logged_in(sender: Any, request: HttpRequest, user: StaffUser, **kwargs: Any) -> None:
    audit_record(actor=user, action="staff.login", details={"ip": _client_ip(request)})


def on_logged_out(sender: Any, request: HttpRequest, user: StaffUser | None, **kwargs: Any) -> None:
    if user is not None and user.is_authenticated:
        audit_record(actor=user, action="staff.logout", details={"ip": _client_ip(request)})


def on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    # Django already masks the password in `credentials`; only the attempted email is kept.
    email = str(credentials.get("username") or credentials.get("email") or "")
    audit_record(
        actor=None,
        action="staff.login_failed",
        details={"email": email[:254], "ip": _client_ip(request)},
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
