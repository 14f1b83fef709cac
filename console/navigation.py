"""The staff navigation: sections and items, each shown by permission, never by role name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy

from staff import roles

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


@dataclass(frozen=True)
class NavItem:
    """One link; url_name is tried first, and a "coming in a later issue" page stands in for it."""

    key: str
    label: StrOrPromise
    url_name: str | None
    # One permission, or several of which any one shows the item.
    permission: str | tuple[str, ...] | None = None
    staff_only: bool = False
    description: StrOrPromise = ""

    def visible_to(self, user: object) -> bool:
        if not getattr(user, "is_authenticated", False):
            return False
        if self.staff_only and not getattr(user, "is_staff", False):
            return False
        if self.permission is None:
            return True
        wanted = (self.permission,) if isinstance(self.permission, str) else self.permission
        return any(user.has_perm(permission) for permission in wanted)  # type: ignore[attr-defined]

    @property
    def is_placeholder(self) -> bool:
        return self._resolved() is None

    def _resolved(self) -> str | None:
        if self.url_name is None:
            return None
        try:
            return reverse(self.url_name)
        except NoReverseMatch:
            return None

    @property
    def url(self) -> str:
        return self._resolved() or reverse("console:coming_soon", kwargs={"feature": self.key})


@dataclass(frozen=True)
class NavSection:
    label: StrOrPromise
    items: tuple[NavItem, ...]


DASHBOARD = NavItem("dashboard", gettext_lazy("Dashboard"), "console:dashboard")
NAV_SECTIONS: tuple[NavSection, ...] = (
    NavSection(
        gettext_lazy("Finance"),
        (
            NavItem(
                "quotes",
                gettext_lazy("Quotes"),
                "quotes:list",
                roles.FINANCE_VIEW,
                description=gettext_lazy("Request quotes and compare rates before paying out."),
            ),
            NavItem(
                "payouts",
                gettext_lazy("Payouts"),
                "payouts:list",
                (roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW),
                description=gettext_lazy("Initiate, approve and follow payouts."),
            ),
            NavItem(
                "approvals",
                gettext_lazy("Approvals"),
                "payouts:approvals",
                roles.PAYOUT_APPROVE,
                description=gettext_lazy("Payouts waiting for an approver: for me, or for anyone."),
            ),
        ),
    ),
    NavSection(
        gettext_lazy("Books"),
        (
            NavItem(
                "reconciliation",
                gettext_lazy("Reconciliation"),
                "books:reconciliation",
                roles.BOOKS_VIEW,
                description=gettext_lazy(
                    "Runs that match PayOps's records against the upstream's."
                ),
            ),
            NavItem(
                "exceptions",
                gettext_lazy("Exceptions"),
                "books:exceptions",
                roles.BOOKS_VIEW,
                description=gettext_lazy(
                    "Every mismatch a run found: owner, state, comments, actions."
                ),
            ),
            NavItem(
                "statements",
                gettext_lazy("Statements"),
                "books:statements",
                roles.BOOKS_VIEW,
                description=gettext_lazy("Statements and balance history per virtual account."),
            ),
            NavItem(
                "fees-report",
                gettext_lazy("Fees and FX"),
                "books:fees_report",
                roles.BOOKS_VIEW,
                description=gettext_lazy("Fees and FX spread paid, per period and corridor."),
            ),
            NavItem(
                "analytics",
                gettext_lazy("Analytics"),
                "analytics:overview",
                roles.BOOKS_VIEW,
                description=gettext_lazy(
                    "Volume, outcomes, time to complete, fees, balances and budget use."
                ),
            ),
        ),
    ),
    NavSection(
        gettext_lazy("Directory"),
        (
            NavItem(
                "end-users",
                gettext_lazy("End users"),
                "users:list",
                roles.DIRECTORY_VIEW,
                description=gettext_lazy("End users and their KYC verification."),
            ),
            NavItem(
                "kyc-review",
                gettext_lazy("KYC review"),
                "users:kyc_queue",
                roles.KYC_REVIEW,
                description=gettext_lazy(
                    "Users waiting for a decision, rejected or not yet verified."
                ),
            ),
            NavItem(
                "accounts",
                gettext_lazy("Virtual accounts"),
                "accounts:list",
                roles.DIRECTORY_VIEW,
                description=gettext_lazy("Virtual accounts, their balances and deposits."),
            ),
            NavItem(
                "recipients",
                gettext_lazy("Recipients"),
                "accounts:recipient_list",
                roles.DIRECTORY_VIEW,
                description=gettext_lazy("Who payouts go to, and who registered them."),
            ),
        ),
    ),
    NavSection(
        gettext_lazy("Alerts"),
        (
            NavItem(
                "alerts",
                gettext_lazy("Alert history"),
                "alerts:history",
                roles.ALERTS_VIEW,
                description=gettext_lazy(
                    "Every alert the rules opened, open or resolved; acknowledge them."
                ),
            ),
            NavItem(
                "alert-subscriptions",
                gettext_lazy("My subscriptions"),
                "alerts:subscriptions",
                roles.ALERTS_VIEW,
                description=gettext_lazy(
                    "Which alert rules reach you by email, at once or in a daily digest."
                ),
            ),
            NavItem(
                "alert-rules",
                gettext_lazy("Alert rules"),
                "alerts:rules",
                roles.ALERTS_MANAGE,
                description=gettext_lazy("What is watched, its thresholds, severity and webhook."),
            ),
        ),
    ),
    NavSection(
        gettext_lazy("Admin"),
        (
            NavItem(
                "environments",
                gettext_lazy("Environments"),
                "gateway:environments",
                roles.ENVIRONMENTS_MANAGE,
                description=gettext_lazy("Upstream environments, credentials and switching."),
            ),
            NavItem(
                "approval-policy",
                gettext_lazy("Approval policy"),
                "payouts:approval_policy",
                roles.APPROVAL_POLICY_MANAGE,
                description=gettext_lazy(
                    "How many distinct approvers a payout needs, by amount and rail."
                ),
            ),
            NavItem(
                "changes",
                gettext_lazy("Changes"),
                "staff:changes",
                roles.ADMIN_CHANGES_DECIDE,
                description=gettext_lazy(
                    "Admin changes waiting for a second admin, and their history."
                ),
            ),
            NavItem(
                "call-log",
                gettext_lazy("Call log"),
                "gateway:call_log",
                roles.CALL_LOG_VIEW,
                description=gettext_lazy("Every call made to the upstream, redacted."),
            ),
            NavItem(
                "webhooks",
                gettext_lazy("Webhook events"),
                "webhooks:events",
                roles.WEBHOOK_EVENTS_VIEW,
                description=gettext_lazy(
                    "Every event the upstream pushed, live; endpoints and secrets."
                ),
            ),
            NavItem(
                "system-health",
                gettext_lazy("System health"),
                "console:system_health",
                roles.SYSTEM_HEALTH_VIEW,
                description=gettext_lazy("Database, cache, worker and upstream checks."),
            ),
            NavItem(
                "audit",
                gettext_lazy("Audit trail"),
                "console:audit",
                roles.AUDIT_LOG_VIEW,
                description=gettext_lazy(
                    "Who changed what, when, from what to what; export and verify it."
                ),
            ),
            NavItem(
                "django-admin",
                gettext_lazy("Django admin"),
                "admin:index",
                staff_only=True,
                description=gettext_lazy("Raw data and staff users."),
            ),
        ),
    ),
)

ITEMS_BY_KEY: dict[str, NavItem] = {
    item.key: item for section in NAV_SECTIONS for item in section.items
}


@dataclass(frozen=True)
class VisibleSection:
    label: StrOrPromise
    items: list[NavItem]


def navigation_for(user: object) -> list[VisibleSection]:
    """The sections and items this user may see (sections without a visible item are left out)."""
    visible = []
    for section in NAV_SECTIONS:
        items = [item for item in section.items if item.visible_to(user)]
        if items:
            visible.append(VisibleSection(section.label, items))
    return visible
