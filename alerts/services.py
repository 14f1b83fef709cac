"""Alerts' writes: rules, evaluation (fire, keep, resolve), acknowledgement, subscriptions.

Every write checks its permission, works in one transaction and writes its audit entry; every
alert fired or resolved queues its deliveries (alerts.delivery) once the transaction commits.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from alerts.conditions import CONDITIONS, condition_get
from alerts.delivery import deliveries_queue
from alerts.models import (
    Alert,
    AlertRule,
    AlertState,
    AlertSubscription,
    DeliveryEvent,
    Severity,
    SubscriptionMode,
)
from alerts.webhook_targets import webhook_host_refusal
from console.sentences import Summary
from gateway.models import Environment
from payouts.models import Payout
from staff import roles
from staff.audit import audit_record
from staff.crypto import encrypt
from staff.errors import ServiceError
from staff.models import StaffUser

logger = logging.getLogger(__name__)


def require(user: StaffUser, permission: str) -> None:
    if not user.has_perm(permission):
        raise PermissionDenied(f"You do not have the permission {permission}.")


# --- Rules --------------------------------------------------------------------------------------


def webhook_url_hint(url: str) -> str:
    """What a page may show of a webhook URL (a secret): its host and last four characters."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}/…{url[-4:]}"


def _checked_webhook_url(url: str) -> str:
    url = url.strip()
    parts = urlsplit(url)
    allowed = {"https", "http"} if settings.ALERTS_WEBHOOK_ALLOW_HTTP else {"https"}
    if parts.scheme not in allowed or not parts.hostname or len(url) > 2000:
        raise ServiceError(
            _("The webhook URL is not valid."),
            errors=[("webhook_url", _("must be an https:// URL"))],
        )
    if webhook_host_refusal(url):
        raise ServiceError(
            _("The webhook URL points inside a private network."),
            errors=[
                (
                    "webhook_url",
                    _("must be a public address (not loopback, private, link-local or metadata)"),
                )
            ],
        )
    return url


def _checked_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 120:
        raise ServiceError(_("A rule needs a name."), errors=[("name", _("1 to 120 characters"))])
    return name


def _checked_severity(severity: str) -> str:
    if severity not in Severity.values:
        raise ServiceError(
            _("Unknown severity."), errors=[("severity", _("info, warning or critical"))]
        )
    return severity


def rule_check(
    *,
    kind: str,
    name: str,
    thresholds: dict[str, Any],
    environment: Environment | None,
    severity: str,
    webhook_url: str = "",
) -> dict[str, Any]:
    """A rule's fields checked and cleaned, as `rule_create` and `rule_update` store them (a
    proposal checks them up front with this: a bad threshold is refused when proposed)."""
    condition = condition_get(kind)
    return {
        "name": _checked_name(name),
        "thresholds": condition.validate(thresholds),
        "environment": environment if condition.per_environment else None,
        "severity": _checked_severity(severity),
        "webhook_url": _checked_webhook_url(webhook_url) if webhook_url else "",
    }


def _require_manager(by: StaffUser | None) -> None:
    # by=None is the system applying an admin change after the single-admin wait
    # (alerts.rule_changes): the proposer's permission was checked when it was proposed.
    if by is not None:
        require(by, roles.ALERTS_MANAGE)


def rule_create(
    *,
    by: StaffUser | None,
    name: str,
    kind: str,
    thresholds: dict[str, Any],
    environment: Environment | None,
    severity: str = Severity.WARNING,
    enabled: bool = True,
    webhook_url: str = "",
    created_by: StaffUser | None = None,
) -> AlertRule:
    """Create a rule, audited as `by` (None: the system). Pages and the API propose it instead
    (alerts.rule_changes): this is what an approved proposal applies, `created_by` its proposer."""
    _require_manager(by)
    creator = created_by or by  # None: the system (alerts.bootstrap's default rules)
    fields = rule_check(
        kind=kind,
        name=name,
        thresholds=thresholds,
        environment=environment,
        severity=severity,
        webhook_url=webhook_url,
    )
    url = fields.pop("webhook_url")
    rule = AlertRule(kind=kind, enabled=enabled, created_by=creator, **fields)
    if url:
        rule.webhook_url_encrypted, rule.webhook_url_hint = encrypt(url), webhook_url_hint(url)
    with transaction.atomic():
        rule.save()
        audit_record(
            actor=by, action="alerts.rule_created", target=rule, before={}, after=rule.snapshot()
        )
    return rule


def rule_update(
    *,
    rule: AlertRule,
    by: StaffUser | None,
    name: str,
    thresholds: dict[str, Any],
    environment: Environment | None,
    severity: str,
    webhook_url: str | None = None,
    webhook_remove: bool = False,
) -> AlertRule:
    """Change a rule (its kind stays); `webhook_url` None keeps the webhook as it is. Audited
    as `by` (None: the system); pages and the API propose it instead (alerts.rule_changes)."""
    _require_manager(by)
    fields = rule_check(
        kind=rule.kind,
        name=name,
        thresholds=thresholds,
        environment=environment,
        severity=severity,
        webhook_url="" if webhook_remove else webhook_url or "",
    )
    with transaction.atomic():
        locked = AlertRule.objects.select_for_update().get(pk=rule.pk)
        before = locked.snapshot()
        locked.name = fields["name"]
        locked.thresholds = fields["thresholds"]
        locked.environment = fields["environment"]
        locked.severity = fields["severity"]
        if webhook_remove:
            locked.webhook_url_encrypted = locked.webhook_url_hint = ""
        elif fields["webhook_url"]:
            url = fields["webhook_url"]
            locked.webhook_url_encrypted = encrypt(url)
            locked.webhook_url_hint = webhook_url_hint(url)
        locked.updated_at = timezone.now()
        locked.save()
        audit_record(
            actor=by,
            action="alerts.rule_changed",
            target=locked,
            before=before,
            after=locked.snapshot(),
        )
    return locked


def rule_set_enabled(*, rule: AlertRule, enabled: bool, by: StaffUser | None) -> AlertRule:
    """Turn a rule on or off; turning it off resolves its open alerts (nobody watches them).
    Audited as `by` (None: the system); pages and the API propose it (alerts.rule_changes)."""
    _require_manager(by)
    with transaction.atomic():
        locked = AlertRule.objects.select_for_update().get(pk=rule.pk)
        if locked.enabled == enabled:
            return locked
        before = locked.snapshot()
        locked.enabled = enabled
        locked.updated_at = timezone.now()
        locked.save(update_fields=["enabled", "updated_at"])
        audit_record(
            actor=by,
            action="alerts.rule_enabled" if enabled else "alerts.rule_disabled",
            target=locked,
            before=before,
            after=locked.snapshot(),
        )
        if not enabled:
            for alert in locked.alerts.filter(state=AlertState.OPEN):
                _resolve(alert, now=timezone.now(), why="rule disabled")
    return locked


# --- Evaluation ---------------------------------------------------------------------------------


def alerts_evaluate(*, now: datetime | None = None) -> dict[str, int]:
    """
    Evaluate every enabled rule once: open an alert for each subject newly true, resolve the
    open ones whose subject is no longer true. A rule whose condition raises is logged and
    skipped (the others still run). Safe to run twice at once: the open alert per rule and
    subject is unique in the database, so a second evaluator's insert is refused.
    """
    now = now or timezone.now()
    counts = {"rules": 0, "fired": 0, "resolved": 0, "failed": 0}
    rules = AlertRule.objects.filter(enabled=True, kind__in=list(CONDITIONS)).select_related(
        "environment"
    )
    for rule in rules:
        counts["rules"] += 1
        try:
            fired, resolved = rule_evaluate(rule=rule, now=now)
        except Exception:
            logger.exception("alert rule %s (%s) could not be evaluated", rule.pk, rule.kind)
            counts["failed"] += 1
            continue
        counts["fired"] += fired
        counts["resolved"] += resolved
    return counts


def rule_evaluate(*, rule: AlertRule, now: datetime) -> tuple[int, int]:
    """One rule: (alerts fired, alerts resolved)."""
    condition = condition_get(rule.kind)
    subjects = condition.evaluate(rule, now)
    open_alerts = {a.subject: a for a in rule.alerts.filter(state=AlertState.OPEN)}
    if condition.resolved_by_acknowledgement:
        # A subject that already had its alert never fires again for this rule.
        seen = set(rule.alerts.filter(subject__in=list(subjects)).values_list("subject", flat=True))
    else:
        seen = set(open_alerts)
    fired = sum(
        1
        for subject, summary in subjects.items()
        if subject not in seen and alert_fire(rule=rule, subject=subject, summary=summary, now=now)
    )
    resolved = 0
    if not condition.resolved_by_acknowledgement:
        for subject, alert in open_alerts.items():
            if subject not in subjects:
                with transaction.atomic():
                    resolved += _resolve(alert, now=now, why="condition cleared")
    return fired, resolved


def _subject_environment_id(subject: str) -> int | None:
    """The environment a subject is in: `environment:<id>` itself, `payout:<id>`'s; None for an
    account or a subject naming nothing that exists (one query)."""
    kind, _sep, key = subject.partition(":")
    if not key.isdigit():
        return None
    if kind == "environment":
        return Environment.objects.filter(pk=int(key)).values_list("pk", flat=True).first()
    if kind == "payout":
        return Payout.objects.filter(pk=int(key)).values_list("environment_id", flat=True).first()
    return None


def alert_fire(
    *, rule: AlertRule, subject: str, summary: Summary | str, now: datetime
) -> Alert | None:
    """Open the rule's alert for `subject`; None when one is already open (another evaluator).
    `summary` is the condition's message (stored as the message, and as its English text, the
    record); a plain text is stored as it is and read in its own words."""
    message = summary if isinstance(summary, Summary) else None
    text = summary.english() if isinstance(summary, Summary) else summary
    try:
        with transaction.atomic():
            alert = Alert.objects.create(
                rule=rule,
                subject=subject,
                environment_id=_subject_environment_id(subject),
                summary=text[:500],
                summary_message=message.as_json() if message is not None else None,
                opened_at=now,
            )
            audit_record(
                actor=None,
                action="alerts.fired",
                target=alert,
                details={
                    "rule": rule.pk,
                    "kind": rule.kind,
                    "subject": subject,
                    "summary": alert.summary,
                    "severity": rule.severity,
                },
            )
            deliveries_queue(alert=alert, event=DeliveryEvent.FIRED)
    except IntegrityError:
        return None
    return alert


def _resolve(alert: Alert, *, now: datetime, why: str, by: StaffUser | None = None) -> int:
    """Resolve an open alert (inside the caller's transaction); 0 if it was already resolved."""
    changed = Alert.objects.filter(pk=alert.pk, state=AlertState.OPEN).update(
        state=AlertState.RESOLVED, resolved_at=now
    )
    if not changed:
        return 0
    alert.state, alert.resolved_at = AlertState.RESOLVED, now
    audit_record(
        actor=by,
        action="alerts.resolved",
        target=alert,
        details={"rule": alert.rule_id, "subject": alert.subject, "why": why},
    )
    deliveries_queue(alert=alert, event=DeliveryEvent.RESOLVED)
    return 1


def alert_acknowledge(*, alert: Alert, by: StaffUser) -> Alert:
    """A person has seen the alert; a failed or returned payout's alert resolves with it."""
    require(by, roles.ALERTS_ACKNOWLEDGE)
    now = timezone.now()
    with transaction.atomic():
        locked = Alert.objects.select_for_update().select_related("rule").get(pk=alert.pk)
        if locked.acknowledged_at is not None:
            raise ServiceError(
                _("This alert was already acknowledged."), code="already_acknowledged", status=409
            )
        locked.acknowledged_at, locked.acknowledged_by = now, by
        locked.save(update_fields=["acknowledged_at", "acknowledged_by"])
        audit_record(
            actor=by,
            action="alerts.acknowledged",
            target=locked,
            details={"rule": locked.rule_id, "subject": locked.subject},
        )
        condition = CONDITIONS.get(locked.rule.kind)
        if condition is not None and condition.resolved_by_acknowledgement:
            _resolve(locked, now=now, why="acknowledged", by=by)
    return locked


# --- Subscriptions ------------------------------------------------------------------------------


def subscription_set(*, user: StaffUser, rule: AlertRule, mode: str | None) -> str | None:
    """The person's choice for a rule: "immediate", "digest", or None (not subscribed)."""
    require(user, roles.ALERTS_VIEW)
    if mode is not None and mode not in SubscriptionMode.values:
        raise ServiceError(
            _("Unknown delivery choice."), errors=[("mode", _("immediate, digest or none"))]
        )
    with transaction.atomic():
        current = AlertSubscription.objects.filter(user=user, rule=rule).first()
        before = current.mode if current else None
        if before == mode:
            return mode
        if mode is None:
            AlertSubscription.objects.filter(user=user, rule=rule).delete()
        else:
            AlertSubscription.objects.update_or_create(
                user=user, rule=rule, defaults={"mode": mode}
            )
        audit_record(
            actor=user,
            action="alerts.subscription_changed",
            target=rule,
            before={"mode": before},
            after={"mode": mode},
        )
    return mode
