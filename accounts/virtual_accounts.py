"""Virtual-account writes: open one through the gateway, refresh its status and balance."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import (
    BalanceSnapshot,
    BalanceSource,
    Deposit,
    VirtualAccount,
    VirtualAccountMode,
    VirtualAccountStatus,
)
from accounts.ordering import should_move
from gateway.client import call_sync, upstream
from gateway.errors import UpstreamError
from gateway.schemas import VirtualAccount as UpstreamVirtualAccount
from gateway.service_errors import service_error_from_upstream
from staff import roles
from staff.errors import ServiceError
from staff.models import StaffUser
from users.mirror import (
    MirrorKind,
    mirror_create,
    parse_time,
    record_refresh,
    refresh_after_commit,
    require,
)
from users.models import EndUser

CENTS = Decimal("0.01")
# The upstream says `user_id`; our API and forms say `end_user_id`.
RENAME = {"user_id": "end_user_id"}


# The audit snapshot: key -> attribute.
SNAPSHOT_FIELDS = {
    "upstream_id": "upstream_id",
    "end_user": "end_user_id",
    "mode": "mode",
    "status": "status",
    "available_balance": "available_balance",
    "currency": "currency",
    "balance_as_of": "balance_as_of",
}


def apply_record(va: VirtualAccount, data: dict[str, Any]) -> None:
    """A full upstream record (create/get answer) is current: take its status as it is."""
    status = str(data.get("status") or "").lower()
    if status in VirtualAccountStatus.values:
        va.status = status
        if status == VirtualAccountStatus.ACTIVE and va.activated_at is None:
            va.activated_at = timezone.now()
    for name in ("account_number", "routing_number", "currency", "type", "bank"):
        if data.get(name):
            setattr(va, name, str(data[name]))
    if data.get("mode") in VirtualAccountMode.values:
        va.mode = data["mode"]
    updated = parse_time(data.get("updated_at"), field="updated_at")
    if updated and (va.upstream_updated_at is None or updated >= va.upstream_updated_at):
        va.upstream_updated_at = updated
    va.upstream_payload = data
    va.refreshed_at = timezone.now()


def _fold_early(
    va: VirtualAccount, early: VirtualAccount
) -> Callable[[VirtualAccount], None] | None:
    """Keep the early row's deposits and activation details; its status, when further along,
    wins over the create answer's."""
    Deposit.objects.filter(virtual_account=early).update(virtual_account=va)
    for name in ("account_number", "routing_number", "activated_at"):
        setattr(va, name, getattr(early, name) or getattr(va, name))
    status_from_events = early.status

    def keep_status(va: VirtualAccount) -> None:
        if status_from_events and should_move(va.status, status_from_events, is_new=False):
            va.status = status_from_events

    return keep_status


VIRTUAL_ACCOUNT: MirrorKind[VirtualAccount, UpstreamVirtualAccount] = MirrorKind(
    model=VirtualAccount,
    audit="virtual_account",
    snapshot_fields=SNAPSHOT_FIELDS,
    upstream_id_of=lambda record: record.id,
    apply_answer=lambda va, record: apply_record(va, record.model_dump(mode="json")),
    fold_early=_fold_early,
    # After no answer: the account the upstream may have made anyway (same user and mode).
    listed=lambda va: call_sync(
        upstream(va.environment).virtual_accounts.list, user_id=va.end_user.upstream_id
    ),
    matches=lambda va, account: (account.mode or "fiat") == va.mode,
)


def virtual_account_create(
    *,
    end_user: EndUser,
    mode: str,
    by: StaffUser,
    request_key: uuid.UUID | None = None,
) -> VirtualAccount:
    """
    Open a virtual account for a verified end user. The upstream takes no idempotency key for
    this call (decisions.md 2), so the row is committed first and a retry after no answer first
    adopts an account the upstream made for this user that we do not know yet.
    """
    require(by, roles.ACCOUNTS_MANAGE)
    if mode not in VirtualAccountMode.values:
        raise ServiceError(
            gettext("Choose fiat or crypto."), errors=[("mode", gettext("must be fiat or crypto"))]
        )
    if not end_user.is_synced or not end_user.is_verified:
        state = end_user.get_verification_status_display().lower()
        raise ServiceError(
            gettext(
                "%(name)s is not verified (verification: %(state)s). Only verified end users "
                "can have a virtual account."
            )
            % {"name": end_user.display_name, "state": state},
            code="end_user_not_verified",
            errors=[
                (
                    "end_user_id",
                    gettext("this end user is not verified (%(state)s)") % {"state": state},
                )
            ],
        )
    return mirror_create(
        VIRTUAL_ACCOUNT,
        environment_id=end_user.environment_id,
        request_key=request_key,
        request={"end_user_id": end_user.pk, "mode": mode},
        defaults={"end_user": end_user, "mode": mode},
        by=by,
        send=lambda va: call_sync(
            upstream(end_user.environment).virtual_accounts.create,
            user_id=end_user.upstream_id,
            mode=mode,
        ),
        refused_for_good=(400,),
        what="the new virtual account",
        rename=RENAME,
        created_summary=lambda va: f"Opened by {by.email} ({va.get_mode_display()})",
    )


def virtual_account_refresh(
    *, virtual_account: VirtualAccount, by: StaffUser | None
) -> VirtualAccount:
    """Status from the upstream, and the balance (with its as-of time) once active."""
    require(by, roles.DIRECTORY_VIEW)
    va = virtual_account
    if not va.is_synced:
        raise ServiceError(
            gettext("This virtual account is not created upstream yet."), code="not_synced"
        )
    client = upstream(va.environment, background=by is None)
    try:
        record = call_sync(client.virtual_accounts.get, va.upstream_id)
        balance = (
            call_sync(client.virtual_accounts.balance, va.upstream_id)
            if str(record.status).lower() == VirtualAccountStatus.ACTIVE
            else None
        )
    except UpstreamError as exc:
        raise service_error_from_upstream(exc, what="the refresh") from exc
    with transaction.atomic():
        va = VirtualAccount.objects.select_for_update().get(pk=va.pk)
        before = VIRTUAL_ACCOUNT.snapshot(va)
        apply_record(va, record.model_dump(mode="json"))
        if balance is not None:
            as_of = balance.updated_at or timezone.now()
            balance_snapshot_record(
                va,
                balance=balance.available_balance,
                currency=balance.currency,
                as_of=as_of,
                source=BalanceSource.REFRESH,
            )
            if va.balance_as_of is None or as_of >= va.balance_as_of:
                va.available_balance = balance.available_balance.quantize(CENTS)
                va.currency = balance.currency
                va.balance_as_of = as_of
        va.save()
        record_refresh(VIRTUAL_ACCOUNT, va, before=before, by=by)
    return va


def balance_snapshot_record(
    va: VirtualAccount,
    *,
    balance: Decimal,
    currency: str,
    as_of: datetime,
    source: BalanceSource | str,
) -> BalanceSnapshot:
    """Keep one reading of the upstream's balance (the caller holds the transaction)."""
    return BalanceSnapshot.objects.create(
        virtual_account=va,
        balance=balance.quantize(CENTS),
        currency=currency,
        as_of=as_of,
        source=source,
    )


SANDBOX_FUNDING_PERMISSIONS = (roles.ENVIRONMENTS_MANAGE, roles.PAYOUT_INITIATE)


def may_fund_in_sandbox(user: object) -> bool:
    """Who may fund a sandbox environment's account with a simulated deposit (the `sandbox` app,
    local and test settings only): admins, and the people who prepare payouts, so that a maker
    tries a first payout without asking an admin."""
    has_perm = getattr(user, "has_perm", None)
    return callable(has_perm) and any(has_perm(p) for p in SANDBOX_FUNDING_PERMISSIONS)


def queue_refresh(va: VirtualAccount) -> None:
    """Refresh the account in the background once the transaction commits (a deposit or the
    activation: the event carries no balance; the refresh reads it at the background priority
    of the upstream's call budget)."""
    from accounts.tasks import virtual_account_refresh_task

    refresh_after_commit(virtual_account_refresh_task, va)
