"""Alerts' reads: rules, the alert history (a constant number of queries per page), a person's
subscriptions."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from alerts.conditions import CONDITIONS, Condition
from alerts.models import Alert, AlertRule, AlertState, AlertSubscription
from alerts.rule_changes import KINDS
from gateway.models import Environment
from staff import roles
from staff.models import ChangeProposal, StaffUser


def _require_reader(user: StaffUser) -> None:
    if not user.has_perm(roles.ALERTS_VIEW):
        raise PermissionDenied(f"You do not have the permission {roles.ALERTS_VIEW}.")


def rule_list(*, user: StaffUser) -> QuerySet[AlertRule]:
    """Every rule with its open alerts counted (one query)."""
    _require_reader(user)
    return AlertRule.objects.select_related("environment", "created_by").annotate(
        open_alerts=Count("alerts", filter=Q(alerts__state="open"))
    )


def rule_changes_pending(*, user: StaffUser) -> dict[int | None, list[ChangeProposal]]:
    """The rule changes waiting for another admin (staff.changes), by rule id; None: new rules
    (one query)."""
    _require_reader(user)
    waiting: dict[int | None, list[ChangeProposal]] = {}
    proposals = ChangeProposal.objects.filter(
        kind__in=KINDS, state=ChangeProposal.State.PENDING
    ).select_related("proposed_by")
    for proposal in proposals.order_by("proposed_at", "pk"):
        # A rule's own changes name it; a new rule's name what it would create ("new:<name>").
        key = int(proposal.target_id) if proposal.target_id.isdigit() else None
        waiting.setdefault(key, []).append(proposal)
    return waiting


def rules_with_changes_waiting(*, user: StaffUser) -> tuple[list[AlertRule], list[ChangeProposal]]:
    """Every rule (as `rule_list`), each with `waiting_changes` (its proposals waiting), and the
    new rules waiting (two queries)."""
    rules = list(rule_list(user=user))
    waiting = rule_changes_pending(user=user)
    for rule in rules:
        rule.waiting_changes = waiting.get(rule.pk, [])  # type: ignore[attr-defined]
    return rules, waiting.get(None, [])


def rule_get(*, user: StaffUser, pk: int) -> AlertRule:
    _require_reader(user)
    return get_object_or_404(AlertRule.objects.select_related("environment"), pk=pk)


def rule_with_changes_waiting(*, user: StaffUser, pk: int) -> AlertRule:
    """One rule, with `waiting_changes` (its proposals waiting for another admin)."""
    rule = rule_get(user=user, pk=pk)
    rule.waiting_changes = list(  # type: ignore[attr-defined]
        ChangeProposal.objects.filter(
            kind__in=KINDS,
            state=ChangeProposal.State.PENDING,
            target_type=AlertRule._meta.label_lower,
            target_id=str(rule.pk),
        )
        .select_related("proposed_by")
        .order_by("proposed_at", "pk")
    )
    return rule


def alert_list(
    *,
    user: StaffUser,
    state: str = "",
    kind: str = "",
    environment: Environment | None = None,
    rule_id: int | None = None,
) -> QuerySet[Alert]:
    """The history, newest first: related rows joined, so a page costs the same whatever its
    length (a count and the page)."""
    _require_reader(user)
    alerts = Alert.objects.select_related("rule__environment", "environment", "acknowledged_by")
    if state:
        alerts = alerts.filter(state=state)
    if kind:
        alerts = alerts.filter(rule__kind=kind)
    if environment is not None:
        # About that environment: its own (from its subject), or its rule's scope.
        alerts = alerts.filter(Q(environment=environment) | Q(rule__environment=environment))
    if rule_id is not None:
        alerts = alerts.filter(rule_id=rule_id)
    return alerts.order_by("-opened_at", "-pk")


def alert_get(*, user: StaffUser, pk: int) -> Alert:
    _require_reader(user)
    return get_object_or_404(
        Alert.objects.select_related("rule__environment", "environment", "acknowledged_by"),
        pk=pk,
    )


@dataclass(frozen=True)
class OpenAlerts:
    count: int
    newest: list[Alert]


def open_alerts(*, user: StaffUser, limit: int = 5) -> OpenAlerts:
    """The dashboard's view of what is wrong now: how many alerts are open, and the newest few
    (two queries, however many are open)."""
    _require_reader(user)
    alerts = Alert.objects.filter(state=AlertState.OPEN)
    newest = alerts.select_related("rule__environment", "environment").order_by(
        "-opened_at", "-pk"
    )[:limit]
    return OpenAlerts(count=alerts.count(), newest=list(newest))


@dataclass(frozen=True)
class SubscriptionRow:
    rule: AlertRule
    mode: str | None  # "immediate", "digest", or None


def subscription_rows(*, user: StaffUser) -> list[SubscriptionRow]:
    """Every enabled rule with this person's choice for it (two queries)."""
    _require_reader(user)
    modes = dict(AlertSubscription.objects.filter(user=user).values_list("rule_id", "mode"))
    rules = AlertRule.objects.select_related("environment").filter(enabled=True)
    return [SubscriptionRow(rule, modes.get(rule.pk)) for rule in rules]


def conditions() -> list[Condition]:
    return list(CONDITIONS.values())
