"""The staff navigation: sections and items, each shown by permission, never by role name."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import NoReverseMatch, reverse

from staff import roles


@dataclass(frozen=True)
class NavItem:
    """One link; url_name is tried first, and a "coming in a later issue" page stands in for it."""

    key: str
    label: str
    url_name: str | None
    # One permission, or several of which any one shows the item.
    permission: str | tuple[str, ...] | None = None
    staff_only: bool = False
    description: str = ""

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
    label: str
    items: tuple[NavItem, ...]


DASHBOARD = NavItem("dashboard", "Dashboard", "console:dashboard")
NAV_SECTIONS: tuple[NavSection, ...] = (
    NavSection(
        "Finance",
        (
            NavItem(
                "quotes",
                "Quotes",
                "quotes:list",
                roles.FINANCE_VIEW,
                description="Request quotes and compare rates before paying out.",
            ),
            NavItem(
                "payouts",
                "Payouts",
                "payouts:list",
                (roles.FINANCE_VIEW, roles.COMPLIANCE_VIEW),
                description="Initiate, approve and follow payouts.",
            ),
            NavItem(
                "approvals",
                "Approvals",
                "payouts:approvals",
                roles.PAYOUT_APPROVE,
                description="Payouts waiting for an approver: for me, or for anyone.",
            ),
        ),
    ),
    NavSection(
        "Books",
        (
            NavItem(
                "reconciliation",
                "Reconciliation",
                "books:reconciliation",
                roles.BOOKS_VIEW,
                description="Runs that match PayOps's records against the upstream's.",
            ),
            NavItem(
                "exceptions",
                "Exceptions",
                "books:exceptions",
                roles.BOOKS_VIEW,
                description="Every mismatch a run found: owner, state, comments, actions.",
            ),
            NavItem(
                "statements",
                "Statements",
                "books:statements",
                roles.BOOKS_VIEW,
                description="Statements and balance history per virtual account.",
            ),
            NavItem(
                "fees-report",
                "Fees and FX",
                "books:fees_report",
                roles.BOOKS_VIEW,
                description="Fees and FX spread paid, per period and corridor.",
            ),
            NavItem(
                "analytics",
                "Analytics",
                "analytics:overview",
                roles.BOOKS_VIEW,
                description="Volume, outcomes, time to complete, fees, balances and budget use.",
            ),
        ),
    ),
    NavSection(
        "Directory",
        (
            NavItem(
                "end-users",
                "End users",
                "users:list",
                roles.DIRECTORY_VIEW,
                description="End users and their KYC verification.",
            ),
            NavItem(
                "kyc-review",
                "KYC review",
                "users:kyc_queue",
                roles.KYC_REVIEW,
                description="Users waiting for a decision, rejected or not yet verified.",
            ),
            NavItem(
                "accounts",
                "Virtual accounts",
                "accounts:list",
                roles.DIRECTORY_VIEW,
                description="Virtual accounts, their balances and deposits.",
            ),
            NavItem(
                "recipients",
                "Recipients",
                "accounts:recipient_list",
                roles.DIRECTORY_VIEW,
                description="Who payouts go to, and who registered them.",
            ),
        ),
    ),
    NavSection(
        "Alerts",
        (
            NavItem(
                "alerts",
                "Alert history",
                "alerts:history",
                roles.ALERTS_VIEW,
                description="Every alert the rules opened, open or resolved; acknowledge them.",
            ),
            NavItem(
                "alert-subscriptions",
                "My subscriptions",
                "alerts:subscriptions",
                roles.ALERTS_VIEW,
                description="Which alert rules reach you by email, at once or in a daily digest.",
            ),
            NavItem(
                "alert-rules",
                "Alert rules",
                "alerts:rules",
                roles.ALERTS_MANAGE,
                description="What is watched, its thresholds, severity and webhook.",
            ),
        ),
    ),
    NavSection(
        "Admin",
        (
            NavItem(
                "environments",
                "Environments",
                "gateway:environments",
                roles.ENVIRONMENTS_MANAGE,
                description="Upstream environments, credentials and switching.",
            ),
            NavItem(
                "approval-policy",
                "Approval policy",
                "payouts:approval_policy",
                roles.APPROVAL_POLICY_MANAGE,
                description="How many distinct approvers a payout needs, by amount and rail.",
            ),
            NavItem(
                "changes",
                "Changes",
                "staff:changes",
                roles.ADMIN_CHANGES_DECIDE,
                description="Admin changes waiting for a second admin, and their history.",
            ),
            NavItem(
                "call-log",
                "Call log",
                "gateway:call_log",
                roles.CALL_LOG_VIEW,
                description="Every call made to the upstream, redacted.",
            ),
            NavItem(
                "webhooks",
                "Webhook events",
                "webhooks:events",
                roles.WEBHOOK_EVENTS_VIEW,
                description="Every event the upstream pushed, live; endpoints and secrets.",
            ),
            NavItem(
                "system-health",
                "System health",
                "console:system_health",
                roles.SYSTEM_HEALTH_VIEW,
                description="Database, cache, worker and upstream checks.",
            ),
            NavItem(
                "audit",
                "Audit trail",
                "console:audit",
                roles.AUDIT_LOG_VIEW,
                description="Who changed what, when, from what to what; export and verify it.",
            ),
            NavItem(
                "django-admin",
                "Django admin",
                "admin:index",
                staff_only=True,
                description="Raw data and staff users.",
            ),
        ),
    ),
)

ITEMS_BY_KEY: dict[str, NavItem] = {
    item.key: item for section in NAV_SECTIONS for item in section.items
}


@dataclass(frozen=True)
class VisibleSection:
    label: str
    items: list[NavItem]


def navigation_for(user: object) -> list[VisibleSection]:
    """The sections and items this user may see (sections without a visible item are left out)."""
    visible = []
    for section in NAV_SECTIONS:
        items = [item for item in section.items if item.visible_to(user)]
        if items:
            visible.append(VisibleSection(section.label, items))
    return visible
