"""/api/v1/alerts: rules (list, read; propose creating, changing, enabling, disabling), the kinds
and their thresholds, the alert history with acknowledgement, and the caller's own subscriptions.

A rule's creation, change, enabling or disabling is an admin change (alerts.rule_changes): the
endpoint answers 202 with the proposal (`/changes/{id}`), applied once another admin approves it.

Every operation states its permission beside itself (`@needs`, console.api_permissions): readers
need alerts.view_alerts, acknowledging alerts.acknowledge_alerts, rules alerts.manage_alerts; the
services check again. A rule's webhook URL is write-only: reads show its masked hint.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import HttpRequest
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status

from alerts import rule_changes, selectors, services
from alerts.conditions import condition_get
from alerts.models import Alert, AlertRule
from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut, PageNumber, PageOut, PageSize, paginate
from console.inputs import Text
from gateway.api_support import ChangeOut, acting_staff
from gateway.models import Environment
from staff import roles
from staff.errors import ServiceError
from staff.models import ChangeProposal

router = Router(tags=["alerts"])

SeverityName = Literal["info", "warning", "critical"]


class ThresholdOut(Schema):
    name: str
    label: str
    default: int
    minimum: int
    maximum: int


class KindOut(Schema):
    kind: str
    label: str
    description: str
    thresholds: list[ThresholdOut]
    resolved_by_acknowledgement: bool = Field(
        description="Its alerts resolve when a person acknowledges them, not by themselves."
    )
    per_environment: bool


class RuleChangeWaitingOut(Schema):
    """An admin change of the rule waiting for another admin (`/changes/{id}`)."""

    id: int
    kind: str
    summary: str
    proposed_by: str
    proposed_at: datetime

    @staticmethod
    def resolve_proposed_by(obj: ChangeProposal) -> str:
        return obj.proposed_by.email


class RuleOut(Schema):
    id: int
    name: str
    kind: str
    thresholds: dict[str, int]
    environment: str | None = Field(description="null: every active environment.")
    severity: str
    enabled: bool
    webhook: str = Field(description="The webhook URL's masked hint; empty when none.")
    created_by: str | None = Field(description="Who proposed it; null: the system's default rules.")
    created_at: datetime
    updated_at: datetime
    changes_waiting: list[RuleChangeWaitingOut] = Field(
        description="Its admin changes waiting for another admin's approval."
    )

    @staticmethod
    def resolve_changes_waiting(obj: AlertRule) -> list[ChangeProposal]:
        return list(getattr(obj, "waiting_changes", []))

    @staticmethod
    def resolve_environment(obj: AlertRule) -> str | None:
        return obj.environment.name if obj.environment else None

    @staticmethod
    def resolve_webhook(obj: AlertRule) -> str:
        return obj.webhook_url_hint

    @staticmethod
    def resolve_created_by(obj: AlertRule) -> str | None:
        return obj.created_by.email if obj.created_by else None


class RuleIn(Schema):
    name: Text = Field(description="1 to 120 characters.")
    kind: str = Field(description="One of GET /alerts/kinds.")
    thresholds: dict[str, int] = Field(
        default_factory=dict, description="The kind's thresholds; defaults for those left out."
    )
    environment: str | None = Field(None, description="An active environment's name; null: all.")
    severity: SeverityName = "warning"
    enabled: bool = True
    webhook_url: str = Field("", description="A Slack-compatible incoming webhook (https).")


class RuleChangeIn(Schema):
    name: Text | None = None
    thresholds: dict[str, int] | None = None
    environment: str | None = Field(None, description="An environment's name, or `*` for all.")
    severity: SeverityName | None = None
    webhook_url: str | None = Field(None, description='A new webhook URL; `""` removes it.')


class AlertOut(Schema):
    id: int
    rule_id: int
    rule: str
    kind: str
    environment: str | None
    severity: str
    subject: str
    subject_environment: str | None = Field(
        description="The environment the subject is in (an environment's or a payout's), "
        "whatever the rule's scope; null for an account."
    )
    summary: str = Field(
        description="The summary as recorded, in English: stable for logs, search and matching."
    )
    summary_display: str = Field(
        description="The same summary in the request's language (Accept-Language, or the "
        "person's own choice), for showing to people."
    )
    state: str = Field(description="`open` or `resolved`.")
    opened_at: datetime
    resolved_at: datetime | None
    acknowledged_at: datetime | None
    acknowledged_by: str | None

    @staticmethod
    def resolve_rule(obj: Alert) -> str:
        return obj.rule.name

    @staticmethod
    def resolve_kind(obj: Alert) -> str:
        return obj.rule.kind

    @staticmethod
    def resolve_environment(obj: Alert) -> str | None:
        return obj.rule.environment.name if obj.rule.environment else None

    @staticmethod
    def resolve_subject_environment(obj: Alert) -> str | None:
        return obj.environment.name if obj.environment else None

    @staticmethod
    def resolve_summary_display(obj: Alert) -> str:
        return obj.summary_text()

    @staticmethod
    def resolve_severity(obj: Alert) -> str:
        return obj.rule.severity

    @staticmethod
    def resolve_acknowledged_by(obj: Alert) -> str | None:
        return obj.acknowledged_by.email if obj.acknowledged_by else None


class AlertPage(PageOut[AlertOut]):
    pass


class SubscriptionOut(Schema):
    rule_id: int
    rule: str
    kind: str
    mode: str | None = Field(description="`immediate`, `digest`, or null (not subscribed).")


class SubscriptionIn(Schema):
    mode: Literal["immediate", "digest"] | None = Field(
        description="`immediate` (an email per alert), `digest` (one a day), null: none."
    )


def _environment(name: str | None) -> Environment | None:
    if not name:
        return None
    environment = Environment.objects.filter(name=name, is_active=True).first()
    if environment is None:
        raise ServiceError(
            _("No active environment is named so."),
            code="unknown_environment",
            errors=[("environment", _("no active environment has this name"))],
        )
    return environment


@router.get("/kinds", response={200: list[KindOut], **ERROR_RESPONSES}, summary="List kinds")
@needs(roles.ALERTS_VIEW)
def list_kinds(request: HttpRequest) -> list[KindOut]:
    acting_staff(request)
    return [
        KindOut(
            kind=c.kind,
            label=str(c.label),
            description=str(c.description),
            thresholds=[
                ThresholdOut(
                    name=t.name,
                    label=str(t.label),
                    default=t.default,
                    minimum=t.minimum,
                    maximum=t.maximum,
                )
                for t in c.thresholds
            ],
            resolved_by_acknowledgement=c.resolved_by_acknowledgement,
            per_environment=c.per_environment,
        )
        for c in selectors.conditions()
    ]


@router.get("/rules", response={200: list[RuleOut], **ERROR_RESPONSES}, summary="List rules")
@needs(roles.ALERTS_VIEW)
def list_rules(request: HttpRequest) -> list[AlertRule]:
    rules, _new = selectors.rules_with_changes_waiting(user=acting_staff(request))
    return rules


PROPOSED = {202: ChangeOut, 409: ErrorOut, **ERROR_RESPONSES}


@router.post("/rules", response=PROPOSED, summary="Propose a rule")
@needs(roles.ALERTS_MANAGE)
def create_rule(request: HttpRequest, payload: RuleIn) -> Status[ChangeOut]:
    """202 with the admin change; the rule is created once another admin approves it."""
    proposal = rule_changes.rule_create_propose(
        by=acting_staff(request),
        name=payload.name,
        kind=payload.kind,
        thresholds=payload.thresholds,
        environment=_environment(payload.environment),
        severity=payload.severity,
        enabled=payload.enabled,
        webhook_url=payload.webhook_url,
    )
    return Status(202, ChangeOut.of(proposal))


@router.get("/rules/{rule_id}", response={200: RuleOut, **ERROR_RESPONSES}, summary="Read a rule")
@needs(roles.ALERTS_VIEW)
def get_rule(request: HttpRequest, rule_id: int) -> AlertRule:
    return selectors.rule_with_changes_waiting(user=acting_staff(request), pk=rule_id)


@router.patch("/rules/{rule_id}", response=PROPOSED, summary="Propose a rule change")
@needs(roles.ALERTS_MANAGE)
def change_rule(request: HttpRequest, rule_id: int, payload: RuleChangeIn) -> Status[ChangeOut]:
    """Fields left out keep their value; its kind never changes (create another rule). 202 with
    the admin change, applied once another admin approves it."""
    by = acting_staff(request)
    rule = selectors.rule_get(user=by, pk=rule_id)
    condition_get(rule.kind)
    given = payload.model_fields_set
    if "environment" in given:
        environment = (
            None if payload.environment in (None, "*") else _environment(payload.environment)
        )
    else:
        environment = rule.environment
    proposal = rule_changes.rule_change_propose(
        rule=rule,
        by=by,
        name=payload.name if payload.name is not None else rule.name,
        thresholds=payload.thresholds if payload.thresholds is not None else rule.thresholds,
        environment=environment,
        severity=payload.severity or rule.severity,
        webhook_url=payload.webhook_url or None,
        webhook_remove=payload.webhook_url == "",
    )
    return Status(202, ChangeOut.of(proposal))


@router.post("/rules/{rule_id}/enable", response=PROPOSED, summary="Propose enabling a rule")
@needs(roles.ALERTS_MANAGE)
def enable_rule(request: HttpRequest, rule_id: int) -> Status[ChangeOut]:
    """202 with the admin change, applied once another admin approves it."""
    by = acting_staff(request)
    rule = selectors.rule_get(user=by, pk=rule_id)
    proposal = rule_changes.rule_enabled_propose(rule=rule, enabled=True, by=by)
    return Status(202, ChangeOut.of(proposal))


@router.post("/rules/{rule_id}/disable", response=PROPOSED, summary="Propose disabling a rule")
@needs(roles.ALERTS_MANAGE)
def disable_rule(request: HttpRequest, rule_id: int) -> Status[ChangeOut]:
    """202 with the admin change; once approved, its open alerts resolve (nobody watches them)."""
    by = acting_staff(request)
    rule = selectors.rule_get(user=by, pk=rule_id)
    proposal = rule_changes.rule_enabled_propose(rule=rule, enabled=False, by=by)
    return Status(202, ChangeOut.of(proposal))


@router.get(
    "/subscriptions",
    response={200: list[SubscriptionOut], **ERROR_RESPONSES},
    summary="My subscriptions",
)
@needs(roles.ALERTS_VIEW)
def list_subscriptions(request: HttpRequest) -> list[SubscriptionOut]:
    """Every enabled rule with the caller's choice for it."""
    return [
        SubscriptionOut(rule_id=row.rule.pk, rule=row.rule.name, kind=row.rule.kind, mode=row.mode)
        for row in selectors.subscription_rows(user=acting_staff(request))
    ]


@router.put(
    "/subscriptions/{rule_id}",
    response={200: SubscriptionOut, **ERROR_RESPONSES},
    summary="Set my subscription",
)
@needs(roles.ALERTS_VIEW)
def set_subscription(
    request: HttpRequest, rule_id: int, payload: SubscriptionIn
) -> SubscriptionOut:
    by = acting_staff(request)
    rule = selectors.rule_get(user=by, pk=rule_id)
    mode = services.subscription_set(user=by, rule=rule, mode=payload.mode)
    return SubscriptionOut(rule_id=rule.pk, rule=rule.name, kind=rule.kind, mode=mode)


@router.get("", response={200: AlertPage, **ERROR_RESPONSES}, summary="Alert history")
@needs(roles.ALERTS_VIEW)
def list_alerts(
    request: HttpRequest,
    state: Literal["open", "resolved"] | None = None,
    kind: str | None = None,
    environment: str | None = None,
    page: int = PageNumber,
    page_size: int = PageSize,
) -> dict[str, object]:
    alerts = selectors.alert_list(
        user=acting_staff(request),
        state=state or "",
        kind=kind or "",
        environment=_environment(environment),
    )
    return paginate(alerts, page=page, page_size=page_size)


@router.get("/{alert_id}", response={200: AlertOut, **ERROR_RESPONSES}, summary="Read an alert")
@needs(roles.ALERTS_VIEW)
def get_alert(request: HttpRequest, alert_id: int) -> Alert:
    return selectors.alert_get(user=acting_staff(request), pk=alert_id)


@router.post(
    "/{alert_id}/acknowledge",
    response={200: AlertOut, 409: ErrorOut, **ERROR_RESPONSES},
    summary="Acknowledge an alert",
)
@needs(roles.ALERTS_ACKNOWLEDGE)
def acknowledge_alert(request: HttpRequest, alert_id: int) -> Alert:
    """A failed or returned payout's alert resolves with it; others resolve when they clear."""
    by = acting_staff(request)
    services.alert_acknowledge(alert=selectors.alert_get(user=by, pk=alert_id), by=by)
    return selectors.alert_get(user=by, pk=alert_id)
