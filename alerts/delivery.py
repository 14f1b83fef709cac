"""Delivery of alerts: email to the subscribers, a Slack-compatible POST to the rule's webhook.

Each (alert, event, channel, target) is one AlertDelivery row, unique, created in the alert's
transaction and sent by a django-q2 task queued on commit. A send claims its row first (a
conditional UPDATE), so two workers never send the same one; a failure keeps the row pending
with a later `next_attempt_at` (doubling, at most an hour) for the `alerts.deliveries_retry`
schedule, until ALERTS_DELIVERY_MAX_ATTEMPTS. The alert itself is committed before any send:
a failed delivery never loses it.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta
from typing import Any

import httpx
from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django_q.tasks import async_task

from alerts.models import (
    Alert,
    AlertDelivery,
    AlertState,
    AlertSubscription,
    DeliveryChannel,
    DeliveryEvent,
    DeliveryState,
    DigestSent,
    SubscriptionMode,
)
from alerts.webhook_targets import webhook_resolved_refusal
from staff import roles
from staff.crypto import decrypt
from staff.models import StaffUser

logger = logging.getLogger(__name__)

WEBHOOK_TARGET = "rule-webhook"
CLAIM = timedelta(minutes=5)  # a claimed send not finished by then may be tried again
BACKOFF_CAP = timedelta(hours=1)


def _user_target(user_id: int) -> str:
    return f"user:{user_id}"


def deliveries_queue(*, alert: Alert, event: str) -> list[AlertDelivery]:
    """Inside the alert's transaction: one delivery per immediate subscriber who may read alerts,
    and one to the rule's webhook; each is sent by a task once the transaction commits."""
    rule = alert.rule
    targets: list[tuple[str, str]] = []
    subscriptions = AlertSubscription.objects.filter(
        rule=rule, mode=SubscriptionMode.IMMEDIATE, user__is_active=True
    ).select_related("user")
    for subscription in subscriptions:
        if subscription.user.has_perm(roles.ALERTS_VIEW):
            targets.append((DeliveryChannel.EMAIL, _user_target(subscription.user_id)))
    if rule.webhook_url_encrypted:
        targets.append((DeliveryChannel.WEBHOOK, WEBHOOK_TARGET))
    created = []
    for channel, target in targets:
        delivery, new = AlertDelivery.objects.get_or_create(
            alert=alert, event=event, channel=channel, target=target
        )
        if new:
            created.append(delivery)
    ids = [d.pk for d in created]
    if ids:
        transaction.on_commit(lambda: _queue(ids))
    return created


def _queue(ids: list[int]) -> None:
    from alerts.tasks import alert_delivery_send

    for delivery_id in ids:
        async_task(alert_delivery_send, delivery_id)


def _claim(delivery_id: int, now: datetime) -> bool:
    """Take the send: True for the one caller that moved `next_attempt_at` past now."""
    return bool(
        AlertDelivery.objects.filter(
            pk=delivery_id, state=DeliveryState.PENDING, next_attempt_at__lte=now
        ).update(next_attempt_at=now + CLAIM)
    )


def delivery_send(*, delivery_id: int, now: datetime | None = None) -> str:
    """Send one delivery if it is due and nobody else is sending it; its state after."""
    now = now or timezone.now()
    if not _claim(delivery_id, now):
        return "skipped"
    delivery = AlertDelivery.objects.select_related(
        "alert__rule__environment", "alert__environment", "alert__acknowledged_by"
    ).get(pk=delivery_id)
    try:
        if delivery.channel == DeliveryChannel.EMAIL:
            _send_email(delivery)
        else:
            _send_webhook(delivery)
    except Exception as exc:  # any failure: retried later, the alert stays
        attempts = delivery.attempts + 1
        # A refused target is not retried: its address will not become public by waiting.
        refused = isinstance(exc, WebhookRefused) and exc.final
        failed = refused or attempts >= settings.ALERTS_DELIVERY_MAX_ATTEMPTS
        delay = min(timedelta(minutes=2 ** (attempts - 1)), BACKOFF_CAP)
        AlertDelivery.objects.filter(pk=delivery.pk).update(
            attempts=attempts,
            state=DeliveryState.FAILED if failed else DeliveryState.PENDING,
            next_attempt_at=now + delay,
            last_error=f"{type(exc).__name__}: {exc}"[:300],
        )
        logger.warning("alert delivery %s failed (attempt %s): %s", delivery.pk, attempts, exc)
        return DeliveryState.FAILED if failed else "retry"
    AlertDelivery.objects.filter(pk=delivery.pk).update(
        attempts=delivery.attempts + 1, state=DeliveryState.SENT, sent_at=timezone.now()
    )
    return DeliveryState.SENT


def deliveries_retry_due(*, now: datetime | None = None) -> int:
    """The schedule's job: send every pending delivery whose time has come."""
    now = now or timezone.now()
    ids = list(
        AlertDelivery.objects.filter(
            state=DeliveryState.PENDING, next_attempt_at__lte=now
        ).values_list("pk", flat=True)[:500]
    )
    for delivery_id in ids:
        delivery_send(delivery_id=delivery_id, now=now)
    return len(ids)


# --- The messages -------------------------------------------------------------------------------


def _language(user: StaffUser | None) -> str:
    return (user.language if user is not None else "") or settings.LANGUAGE_CODE


def alert_headline(alert: Alert, event: str) -> str:
    rule = alert.rule
    if event == DeliveryEvent.RESOLVED:
        return _("Resolved: %(rule)s: %(summary)s") % {
            "rule": rule.name,
            "summary": alert.summary_text(),
        }
    return _("%(severity)s: %(rule)s: %(summary)s") % {
        "severity": rule.get_severity_display(),
        "rule": rule.name,
        "summary": alert.summary_text(),
    }


def _details(alert: Alert) -> str:
    rule = alert.rule
    # The alert's own environment when its subject has one, else the rule's scope.
    place = alert.environment or rule.environment
    environment = place.name if place else _("every environment")
    return _("Rule %(rule)s (%(kind)s), %(environment)s; opened %(opened)s UTC") % {
        "rule": rule.name,
        "kind": rule.kind,
        "environment": environment,
        "opened": alert.opened_at.strftime("%Y-%m-%d %H:%M"),
    }


def _send_email(delivery: AlertDelivery) -> None:
    user = StaffUser.objects.get(pk=int(delivery.target.split(":", 1)[1]))
    with translation.override(_language(user)):
        headline = alert_headline(delivery.alert, delivery.event)
        body = "\n\n".join(
            [
                headline,
                _details(delivery.alert),
                _("Alert history: %(path)s") % {"path": reverse("alerts:history")},
                _("You receive this because you subscribed to this rule in PayOps."),
            ]
        )
        send_mail(
            subject=f"[PayOps] {headline}"[:200],
            message=body,
            from_email=None,
            recipient_list=[user.email],
        )


def slack_payload(alert: Alert, event: str) -> dict[str, Any]:
    """The Slack-compatible body: `text` for clients that read only it, and its blocks."""
    headline = alert_headline(alert, event)
    return {
        "text": headline,
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline}*"}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": _details(alert)}]},
        ],
    }


class WebhookRefused(Exception):
    """A webhook delivery refused before any request (webhook_targets); `final` (a private
    address) fails the delivery at once, an unresolved name is retried like any failure."""

    def __init__(self, message: str, *, final: bool) -> None:
        super().__init__(message)
        self.final = final


def _send_webhook(delivery: AlertDelivery) -> None:
    rule = delivery.alert.rule
    if not rule.webhook_url_encrypted:
        raise RuntimeError("the rule has no webhook any more")
    url = decrypt(rule.webhook_url_encrypted)
    refusal = webhook_resolved_refusal(url)
    if refusal:
        # Never sent: the name resolves to (or is) an address inside our network (SSRF), or to
        # nothing. The history names the rule's hint, never the URL (a secret).
        why = "a private address" if refusal == "private" else "no address"
        raise WebhookRefused(
            f"{rule.webhook_url_hint}: refused, it resolves to {why}", final=refusal == "private"
        )
    with translation.override(settings.LANGUAGE_CODE):
        payload = slack_payload(delivery.alert, delivery.event)
    try:
        response = httpx.post(url, json=payload, timeout=settings.ALERTS_WEBHOOK_TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        # Some of httpx's messages quote the URL, a secret: keep the kind of failure only.
        raise RuntimeError(f"{rule.webhook_url_hint}: {type(exc).__name__}") from None
    if response.status_code >= 300:
        # The URL is a secret: the error names the host only.
        raise RuntimeError(f"{rule.webhook_url_hint} answered HTTP {response.status_code}")


# --- The daily digest ---------------------------------------------------------------------------


def digest_send(*, day: date | None = None, now: datetime | None = None) -> int:
    """One email per person with digest subscriptions listing the alerts their rules opened in
    the 24 hours before `now`; nothing when there were none. Once per person per day."""
    now = now or timezone.now()
    day = day or now.date()
    since = now - timedelta(days=1)
    by_user: dict[int, list[int]] = {}
    for user_id, rule_id in AlertSubscription.objects.filter(
        mode=SubscriptionMode.DIGEST, user__is_active=True
    ).values_list("user_id", "rule_id"):
        by_user.setdefault(user_id, []).append(rule_id)
    if not by_user:
        return 0
    alerts = list(
        Alert.objects.filter(
            rule_id__in={r for rules in by_user.values() for r in rules},
            opened_at__gte=since,
            opened_at__lt=now,
        )
        .select_related("rule", "environment")
        .order_by("opened_at", "pk")
    )
    users = StaffUser.objects.in_bulk(list(by_user))
    sent = 0
    for user_id, rule_ids in by_user.items():
        user = users[user_id]
        mine = [a for a in alerts if a.rule_id in set(rule_ids)]
        if not mine or not user.has_perm(roles.ALERTS_VIEW):
            continue
        try:
            with transaction.atomic():
                DigestSent.objects.create(user=user, day=day, alerts=len(mine))
        except IntegrityError:
            continue  # already sent today
        try:
            _send_digest(user, mine, day)
        except Exception:
            logger.exception("alert digest for user %s failed; the next run tries again", user_id)
            DigestSent.objects.filter(user=user, day=day).delete()
            continue
        sent += 1
    return sent


def _send_digest(user: StaffUser, alerts: list[Alert], day: date) -> None:
    with translation.override(_language(user)):
        lines = [
            "- "
            + alert.opened_at.strftime("%H:%M UTC ")
            + alert_headline(alert, DeliveryEvent.FIRED)
            + (f" ({_('resolved')})" if alert.state == AlertState.RESOLVED else "")
            for alert in alerts
        ]
        subject = _("[PayOps] %(count)s alerts on %(day)s") % {
            "count": len(alerts),
            "day": day.isoformat(),
        }
        body = "\n".join(
            [_("The alerts of the rules you follow in a daily digest:"), "", *lines, ""]
        )
        send_mail(subject=subject, message=body, from_email=None, recipient_list=[user.email])
