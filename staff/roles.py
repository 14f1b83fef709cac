"""Staff roles declared in code: each role is a Django group holding a fixed set of permissions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db import DEFAULT_DB_ALIAS, transaction
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

from staff.actions import record_action  # no live page for these records: announce=False
from staff.errors import ServiceError
from staff.models import StaffUser
from staff.step_up import step_up_require

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


# Permissions are "app_label.codename"; the staff ones are declared on StaffUser.Meta.permissions.
FINANCE_VIEW = "staff.view_finance"
PAYOUT_INITIATE = "staff.initiate_payout"
PAYOUT_APPROVE = "staff.approve_payout"
COMPLIANCE_VIEW = "staff.view_compliance"
END_USERS_MANAGE = "staff.manage_end_users"
ENVIRONMENTS_MANAGE = "staff.manage_environments"
CALL_LOG_VIEW = "staff.view_call_log"
SYSTEM_HEALTH_VIEW = "staff.view_system_health"
AUDIT_LOG_VIEW = "staff.view_audit_log"
APPROVAL_POLICY_MANAGE = "payouts.manage_approval_policy"
# Download a payout's evidence pack (declared on payouts.Payout.Meta.permissions).
PAYOUT_EVIDENCE_VIEW = "payouts.view_evidence"
# Declared on staff.ChangeProposal.Meta.permissions: see and decide admin changes (staff.changes).
ADMIN_CHANGES_DECIDE = "staff.decide_admin_changes"
# Declared on webhooks.WebhookEndpoint.Meta.permissions.
WEBHOOK_EVENTS_VIEW = "webhooks.view_webhook_events"
WEBHOOKS_MANAGE = "webhooks.manage_webhooks"
# The directory of end users and accounts: permissions declared by the apps that own the records.
DIRECTORY_VIEW = "users.view_directory"
KYC_REVIEW = "users.review_kyc"
ACCOUNTS_MANAGE = "accounts.manage_accounts"
# Dual control on bank details: approve or reject a recipient (or a change to one). The policy's
# roles (accounts.recipients.recipient_approver_roles) must also name one of the person's roles.
RECIPIENTS_APPROVE = "accounts.approve_recipients"
# The books (declared on books.BalanceAdjustment.Meta.permissions): read statements, reports,
# receipts and reconciliation; run reconciliation and work its exceptions.
BOOKS_VIEW = "books.view_books"
RECONCILE = "books.reconcile"
# Alerts (declared on alerts.AlertRule.Meta.permissions): read rules and history and subscribe
# (every role); acknowledge an alert (every role that acts; not the auditor); manage the rules and
# their webhook destinations (admins).
ALERTS_VIEW = "alerts.view_alerts"
ALERTS_ACKNOWLEDGE = "alerts.acknowledge_alerts"
ALERTS_MANAGE = "alerts.manage_alerts"

# What a personal API token may do (staff.api_tokens): each scope allows these permissions, and a
# token's owner keeps only those of their own permissions that one of the token's scopes allows
# (StaffUser.has_perm). `read`-only tokens are also limited to GET and HEAD (config/api.py).
SCOPE_READ = "read"
SCOPE_PREPARE = "prepare"
SCOPE_APPROVE = "approve"
SCOPE_ADMIN = "admin"
TOKEN_SCOPES: dict[str, tuple[str, ...]] = {
    SCOPE_READ: (
        FINANCE_VIEW,
        COMPLIANCE_VIEW,
        DIRECTORY_VIEW,
        WEBHOOK_EVENTS_VIEW,
        CALL_LOG_VIEW,
        SYSTEM_HEALTH_VIEW,
        AUDIT_LOG_VIEW,
        PAYOUT_EVIDENCE_VIEW,
        BOOKS_VIEW,
        ALERTS_VIEW,
    ),
    SCOPE_PREPARE: (
        PAYOUT_INITIATE,
        END_USERS_MANAGE,
        ACCOUNTS_MANAGE,
        KYC_REVIEW,
        RECONCILE,
        ALERTS_ACKNOWLEDGE,
    ),
    # Approve, reject and release (send and confirm the upstream's code).
    SCOPE_APPROVE: (PAYOUT_APPROVE, RECIPIENTS_APPROVE),
    SCOPE_ADMIN: (
        ENVIRONMENTS_MANAGE,
        WEBHOOKS_MANAGE,
        APPROVAL_POLICY_MANAGE,
        ADMIN_CHANGES_DECIDE,
        ALERTS_MANAGE,
    ),
}
TOKEN_SCOPE_LABELS: dict[str, StrOrPromise] = {
    SCOPE_READ: gettext_lazy("Read: lists and records (GET only unless another scope is given)"),
    SCOPE_PREPARE: (
        gettext_lazy(
            "Prepare: quotes, payout drafts, end users, accounts, recipients, KYC review, "
            "reconciliation runs and exceptions, acknowledging alerts"
        )
    ),
    SCOPE_APPROVE: (
        gettext_lazy(
            "Approve: approve, reject and release payouts, approve recipients "
            "(needs step-up, at most 90 days)"
        )
    ),
    SCOPE_ADMIN: gettext_lazy(
        "Admin: environments, webhooks, approval policy, alert rules "
        "(needs step-up, at most 90 days)"
    ),
}
# Scopes that move money or change who may: created only after step-up, for 90 days at most.
PRIVILEGED_SCOPES = frozenset({SCOPE_APPROVE, SCOPE_ADMIN})


def scope_permissions(scopes: Iterable[str]) -> frozenset[str]:
    """Every permission some of `scopes` allows (unknown scope names allow nothing)."""
    return frozenset(perm for scope in scopes for perm in TOKEN_SCOPES.get(scope, ()))


@dataclass(frozen=True)
class Role:
    """A job in the back office: its group name, what people see, and what it may do."""

    key: str
    display_name: StrOrPromise
    description: StrOrPromise
    duties: tuple[StrOrPromise, ...]
    permissions: tuple[str, ...]
    demo_email: str


FINANCE_MAKER = Role(
    key="finance_maker",
    display_name=gettext_lazy("Finance maker"),
    description=gettext_lazy(
        "Prepares money movements: quotes and payouts that an approver then releases."
    ),
    duties=(
        gettext_lazy("Request quotes and compare rates"),
        gettext_lazy("Initiate payouts with their documents"),
        gettext_lazy("Follow payout status until it settles"),
    ),
    permissions=(
        FINANCE_VIEW,
        PAYOUT_INITIATE,
        DIRECTORY_VIEW,
        ACCOUNTS_MANAGE,
        BOOKS_VIEW,
        RECONCILE,
        ALERTS_VIEW,
        ALERTS_ACKNOWLEDGE,
    ),
    demo_email="maker@payops.local",
)
FINANCE_APPROVER = Role(
    key="finance_approver",
    display_name=gettext_lazy("Finance approver"),
    description=gettext_lazy("Checks and releases payouts prepared by a maker (never their own)."),
    duties=(
        gettext_lazy("Review payouts waiting for approval"),
        gettext_lazy("Approve or reject them with a reason"),
        gettext_lazy("Watch failed and returned payouts"),
    ),
    permissions=(
        FINANCE_VIEW,
        PAYOUT_APPROVE,
        DIRECTORY_VIEW,
        WEBHOOK_EVENTS_VIEW,
        PAYOUT_EVIDENCE_VIEW,
        RECIPIENTS_APPROVE,
        BOOKS_VIEW,
        RECONCILE,
        ALERTS_VIEW,
        ALERTS_ACKNOWLEDGE,
    ),
    demo_email="approver@payops.local",
)
COMPLIANCE = Role(
    key="compliance",
    display_name=gettext_lazy("Compliance"),
    description=gettext_lazy(
        "Onboards end users and their accounts, and follows their verification."
    ),
    duties=(
        gettext_lazy("Create and update end users"),
        gettext_lazy("Follow KYC verification outcomes"),
        gettext_lazy("Open virtual accounts and register recipients"),
    ),
    permissions=(
        COMPLIANCE_VIEW,
        END_USERS_MANAGE,
        DIRECTORY_VIEW,
        KYC_REVIEW,
        ACCOUNTS_MANAGE,
        WEBHOOK_EVENTS_VIEW,
        RECIPIENTS_APPROVE,
        ALERTS_VIEW,
        ALERTS_ACKNOWLEDGE,
    ),
    demo_email="compliance@payops.local",
)
ADMIN = Role(
    key="admin",
    display_name=pgettext_lazy("role", "Admin"),
    description=gettext_lazy(
        "Runs the back office: upstream environments, credentials and system health."
    ),
    duties=(
        gettext_lazy("Manage upstream environments and their credentials"),
        gettext_lazy("Read the upstream call log and the audit trail"),
        gettext_lazy("Watch system health and the request budget"),
    ),
    permissions=(
        ENVIRONMENTS_MANAGE,
        CALL_LOG_VIEW,
        SYSTEM_HEALTH_VIEW,
        AUDIT_LOG_VIEW,
        APPROVAL_POLICY_MANAGE,
        PAYOUT_EVIDENCE_VIEW,
        ADMIN_CHANGES_DECIDE,
        WEBHOOK_EVENTS_VIEW,
        WEBHOOKS_MANAGE,
        # Admins hold every permission of the directory too.
        COMPLIANCE_VIEW,
        END_USERS_MANAGE,
        DIRECTORY_VIEW,
        KYC_REVIEW,
        ACCOUNTS_MANAGE,
        ALERTS_VIEW,
        ALERTS_ACKNOWLEDGE,
        ALERTS_MANAGE,
    ),
    demo_email="admin@payops.local",
)

AUDITOR = Role(
    key="auditor",
    display_name=gettext_lazy("Auditor"),
    description=gettext_lazy(
        "Reads everything, changes nothing: the trail, the money, the directory, the logs."
    ),
    duties=(
        gettext_lazy("Read the audit trail, verify its hash chain and export it"),
        gettext_lazy("Read payouts, their evidence packs, the directory and the webhook events"),
        gettext_lazy("Read the upstream call log and system health"),
    ),
    # Only view permissions: every write (service, page, API operation) needs another one.
    permissions=(
        FINANCE_VIEW,
        COMPLIANCE_VIEW,
        DIRECTORY_VIEW,
        WEBHOOK_EVENTS_VIEW,
        CALL_LOG_VIEW,
        SYSTEM_HEALTH_VIEW,
        AUDIT_LOG_VIEW,
        PAYOUT_EVIDENCE_VIEW,
        BOOKS_VIEW,
        ALERTS_VIEW,
    ),
    demo_email="auditor@payops.local",
)

ROLES: tuple[Role, ...] = (FINANCE_MAKER, FINANCE_APPROVER, COMPLIANCE, ADMIN, AUDITOR)
ROLES_BY_KEY: dict[str, Role] = {role.key: role for role in ROLES}

# A second demo admin (demo staff only: local and test settings): admin changes wait for another
# admin's approval (staff.changes), so the embedded default seeds two to show the whole loop.
DEMO_SECOND_ADMIN_EMAIL = "admin2@payops.local"


def demo_logins_declared() -> list[tuple[Role, str]]:
    """(role, email) of every demo login: one per role, then the second admin."""
    return [*((role, role.demo_email) for role in ROLES), (ADMIN, DEMO_SECOND_ADMIN_EMAIL)]


def _split(permission: str) -> tuple[str, str]:
    app_label, _, codename = permission.partition(".")
    if not app_label or not codename:
        raise ImproperlyConfigured(f"Permission {permission!r} is not 'app_label.codename'.")
    return app_label, codename


def _permissions(names: Iterable[str], using: str) -> list[Permission]:
    """The Permission rows for names, creating the declared ones first if migrate hasn't yet."""
    wanted = {_split(name) for name in names}

    def fetch() -> dict[tuple[str, str], Permission]:
        rows = Permission.objects.using(using).select_related("content_type")
        rows = rows.filter(content_type__app_label__in={a for a, _ in wanted})
        return {(p.content_type.app_label, p.codename): p for p in rows}

    found = fetch()
    missing = wanted - found.keys()
    if missing:
        # post_migrate creates permissions app by app; ours may run before a later app's.
        for app_label in {a for a, _ in missing}:
            create_permissions(apps.get_app_config(app_label), verbosity=0, using=using)
        found = fetch()
        missing = wanted - found.keys()
    if missing:
        names_missing = ", ".join(sorted(f"{a}.{c}" for a, c in missing))
        raise ImproperlyConfigured(f"Roles refer to permissions that don't exist: {names_missing}")
    return [found[key] for key in sorted(wanted)]


def roles_sync(*, using: str = DEFAULT_DB_ALIAS) -> list[Group]:
    """Create or update one group per role so it holds exactly its declared permissions."""
    groups = []
    with transaction.atomic(using=using):
        for role in ROLES:
            group, _ = Group.objects.using(using).get_or_create(name=role.key)
            group.permissions.set(_permissions(role.permissions, using))
            groups.append(group)
    return groups


def user_roles(user: object) -> list[Role]:
    """The roles a user holds, in declaration order (none for anonymous users)."""
    if not getattr(user, "is_authenticated", False):
        return []
    names = set(user.groups.values_list("name", flat=True))  # type: ignore[attr-defined]
    return [role for role in ROLES if role.key in names]


def has_staff_role(user: object) -> bool:
    """Whether the user may use the back office at all: a role, or a superuser."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return False
    return bool(getattr(user, "is_superuser", False) or user_roles(user))


# --- Granting roles (step-up `role.grant`) ------------------------------------------------------

ROLE_GRANT_ACTION = "role.grant"


class UnknownRole(ServiceError):
    """A role key that staff/roles.py does not declare."""

    def __init__(self, key: str) -> None:
        known = ", ".join(ROLES_BY_KEY)
        super().__init__(
            gettext("There is no role %(key)r.") % {"key": key},
            code="unknown_role",
            errors=[("role", gettext("is one of: %(known)s") % {"known": known})],
        )


def may_grant_roles(user: object) -> bool:
    """Who decides who may do what: superusers and holders of the admin role."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return False
    return bool(getattr(user, "is_superuser", False)) or ADMIN in user_roles(user)


def role_names_of(user: object) -> list[str]:
    """The group names a user is in (roles and any other group), sorted: what the audit keeps."""
    return sorted(user.groups.values_list("name", flat=True))  # type: ignore[attr-defined]


def _role_change(*, user: StaffUser, role: Role | str, by: Any, grant: bool) -> bool:
    if not may_grant_roles(by):
        raise PermissionDenied(gettext("Only an admin may grant or revoke roles."))
    if by.pk == user.pk:
        # Nobody raises (or reshapes) their own powers: another admin decides, as a checker.
        raise PermissionDenied(gettext("You may not change your own roles: ask another admin."))
    step_up_require(by, action=ROLE_GRANT_ACTION)
    return role_change_apply(user=user, role=role, by=by, grant=grant)


def role_key_check(role: Role | str) -> str:
    key = role.key if isinstance(role, Role) else str(role)
    if key not in ROLES_BY_KEY:
        raise UnknownRole(key)
    return key


def role_change_apply(*, user: StaffUser, role: Role | str, by: Any, grant: bool) -> bool:
    """The write of a role grant or revoke, audited; the callers checked who may (role_grant,
    or an approved admin change: staff.change_kinds, where `by` is None once its wait ended)."""
    key = role_key_check(role)
    with transaction.atomic():
        user = StaffUser.objects.select_for_update().get(pk=user.pk)
        group, _ = Group.objects.get_or_create(name=key)
        before = role_names_of(user)
        if (key in before) == grant:
            return False  # nothing to change, nothing to audit
        if grant:
            user.groups.add(group)
        else:
            user.groups.remove(group)
        record_action(
            actor=by,
            action="role.granted" if grant else "role.revoked",
            target=user,
            details={"role": key, "before": before, "after": role_names_of(user)},
            before={"groups": before},
            after={"groups": role_names_of(user)},
            announce=False,
        )
    return True


def role_grant(*, user: StaffUser, role: Role | str, by: Any) -> bool:
    """Give `user` the role (admins only, never to themselves, after a fresh second factor);
    audited with the groups before and after. False when they already held it (nothing changed,
    nothing audited)."""
    return _role_change(user=user, role=role, by=by, grant=True)


def role_revoke(*, user: StaffUser, role: Role | str, by: Any) -> bool:
    """Take the role from `user`, with the same rules as `role_grant`."""
    return _role_change(user=user, role=role, by=by, grant=False)
