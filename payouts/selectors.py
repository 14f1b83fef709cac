"""Payout reads: the filtered list (constant queries a page), one payout, the form's choices."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils.translation import gettext

from accounts.models import Recipient, RecipientStatus, VirtualAccount
from console.lists import amount_searched, words_match
from gateway.models import Environment
from payouts.models import Payout, PayoutDocument, PayoutStatusChange
from staff.models import StaffUser
from staff.roles import COMPLIANCE_VIEW, FINANCE_VIEW


def can_read_payouts(user: StaffUser) -> bool:
    """Finance staff read payouts; compliance reads them too, never writes."""
    return bool(user.has_perm(FINANCE_VIEW) or user.has_perm(COMPLIANCE_VIEW))


def require_payout_reader(user: StaffUser) -> None:
    if not can_read_payouts(user):
        raise PermissionDenied(gettext("Only finance and compliance staff read payouts."))


SEARCH_MAX_LENGTH = 100
# What a word of a payout search looks in: the reference, the upstream id, the recipient's name.
SEARCH_LOOKUPS = (
    "reference__icontains",
    "upstream_id__icontains",
    "recipient__first_name__icontains",
    "recipient__last_name__icontains",
    "recipient__company_name__icontains",
)


def payout_search(payouts: QuerySet[Payout], text: str) -> QuerySet[Payout]:
    """
    Payouts whose reference, upstream id or recipient's name hold every word of `text`, or whose
    amount is exactly the amount `text` names: "539" and "539.00" (and "539.00 USD") find the
    same payouts, compared as Decimals in the database. A blank search keeps every payout.
    """
    term = text.strip()
    if not term:
        return payouts
    match = words_match(term, *SEARCH_LOOKUPS)
    amount = amount_searched(term)
    if amount is not None:
        exact = Q(amount=amount.value)
        if amount.currency:
            exact &= Q(currency__iexact=amount.currency)
        match |= exact
    return payouts.filter(match)


def payout_filter(
    payouts: QuerySet[Payout],
    *,
    q: str = "",
    amount: Decimal | None = None,
    status: str = "",
    maker: StaffUser | None = None,
    corridor: str = "",
    amount_min: Decimal | None = None,
    amount_max: Decimal | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[Payout]:
    """`payouts` narrowed by each filter given (the list's and the approval inbox's). `q`
    searches (payout_search), `amount` is exact, `corridor` is SOURCE-RAIL, e.g. USD-WIRE."""
    payouts = payout_search(payouts, q)
    if amount is not None:
        payouts = payouts.filter(amount=amount)
    if status:
        payouts = payouts.filter(status=status)
    if maker is not None:
        payouts = payouts.filter(maker=maker)
    if corridor and "-" in corridor:
        source, _, rail = corridor.partition("-")
        if source == "USD":
            payouts = payouts.filter(payment_currency="")
        else:
            payouts = payouts.filter(payment_currency=source)
        payouts = payouts.filter(recipient__account_type=rail)
    if amount_min is not None:
        payouts = payouts.filter(amount__gte=amount_min)
    if amount_max is not None:
        payouts = payouts.filter(amount__lte=amount_max)
    if date_from:
        payouts = payouts.filter(created_at__date__gte=date_from)
    if date_to:
        payouts = payouts.filter(created_at__date__lte=date_to)
    return payouts


def payout_list(
    *,
    environment: Environment | None,
    q: str = "",
    amount: Decimal | None = None,
    status: str = "",
    maker: StaffUser | None = None,
    corridor: str = "",
    amount_min: Decimal | None = None,
    amount_max: Decimal | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[Payout]:
    """Payouts of one environment, newest first (the index `payout_env_created` serves this
    order: docs/finance.md), narrowed by `payout_filter`."""
    payouts = Payout.objects.select_related(
        "maker", "virtual_account__end_user", "recipient", "quote"
    ).filter(environment=environment)
    if environment is None:
        return payouts.none()
    payouts = payout_filter(
        payouts,
        q=q,
        amount=amount,
        status=status,
        maker=maker,
        corridor=corridor,
        amount_min=amount_min,
        amount_max=amount_max,
        date_from=date_from,
        date_to=date_to,
    )
    return payouts.order_by("-created_at", "-pk")


def payout_detail(*, environment: Environment | None, pk: int) -> Payout:
    return (
        Payout.objects.select_related(
            "maker",
            "virtual_account",
            "virtual_account__end_user",
            "recipient",
            "quote",
            "environment",
        )
        .prefetch_related(
            Prefetch(
                "documents",
                queryset=PayoutDocument.objects.select_related("uploaded_by").prefetch_related(
                    "views__viewer"
                ),
            ),
            Prefetch("status_changes", queryset=PayoutStatusChange.objects.select_related("by")),
        )
        .get(pk=pk, environment=environment)
    )


def active_virtual_accounts(environment: Environment | None) -> QuerySet[VirtualAccount]:
    return (
        VirtualAccount.objects.filter(environment=environment, status="active")
        .exclude(upstream_id="")
        .select_related("end_user")
        .order_by("end_user__last_name", "pk")
    )


def payout_recipients(environment: Environment | None) -> QuerySet[Recipient]:
    """The recipients a payout form offers: payable ones only (approved by a second person)."""
    return payout_recipients_named(environment).filter(status=RecipientStatus.APPROVED)


def payout_recipients_named(environment: Environment | None) -> QuerySet[Recipient]:
    """The recipients a posted form may name: any on a payout rail, so that one not payable
    (waiting, rejected, archived, superseded) reaches the service, whose refusal says why."""
    return (
        Recipient.objects.filter(environment=environment, account_type__in=("WIRE", "SWIFT"))
        .exclude(upstream_id="")
        .order_by("last_name", "company_name", "pk")
    )


def corridors() -> list[tuple[str, str]]:
    return [
        (f"{source}-{rail}", f"{source}→USD {rail}")
        for source in ("USD", "USDC", "USDT")
        for rail in ("WIRE", "SWIFT")
    ]


def payout_makers(environment: Environment | None) -> QuerySet[StaffUser]:
    """Who made payouts in the environment (the filter's menu): one EXISTS a staff member, on
    the maker's index, rather than a DISTINCT over every payout."""
    made = Payout.objects.filter(maker=OuterRef("pk"), environment=environment)
    return StaffUser.objects.filter(Exists(made)).order_by("email")


def state_metrics() -> list[Any]:
    """Scrape-time gauge (console.metrics): payouts by environment and state, two queries (the
    environments, one GROUP BY); every state is listed for every environment, 0 included."""
    from django.db.models import Count
    from prometheus_client.core import GaugeMetricFamily

    from payouts.models import PayoutStatus

    names = dict(Environment.objects.values_list("pk", "name"))
    counts = {
        (row["environment_id"], row["status"]): row["n"]
        for row in Payout.objects.order_by()
        .values("environment_id", "status")
        .annotate(n=Count("id"))
    }
    family = GaugeMetricFamily(
        "payops_payouts", "Payouts by environment and state.", labels=["environment", "state"]
    )
    for pk, name in sorted(names.items(), key=lambda item: item[1]):
        for status in PayoutStatus.values:
            family.add_metric([name, status], counts.get((pk, status), 0))
    return [family]
