"""Alert rule changes as admin changes (staff.changes): one admin proposes, another approves.

An insider admin who could disable the "sign-in failures" or "payout failed" rule, or point its
webhook elsewhere, could hide what they do next (ADR 0025, amended). So the pages and the API
propose; approving applies the change with the alerts services (`rule_create`, `rule_update`,
`rule_set_enabled`), which keep the rules and the audit in one place. Three kinds, as the other
apps split theirs (a new target, a change of one, an on/off flag like a role's grant/revoke):

- `alerts.rule_create`: a new rule (no target yet: named by the rule's name, so two new rules
  may wait side by side, the same name once);
- `alerts.rule_change`: name, thresholds, environment, severity, webhook URL of a rule;
- `alerts.rule_enabled`: enable or disable a rule.

Every proposal is checked up front with `rule_check` (a bad threshold is a 400 on its field when
proposed, not a failed proposal later). A new webhook URL is encrypted (staff.crypto) in the
payload and shown only as its hint in the summary, before and after. A change or on/off proposal
fails when the rule changed in any way since it was proposed.
"""

from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext, gettext_lazy

from alerts.conditions import condition_get
from alerts.models import AlertRule, Severity
from alerts.services import (
    require,
    rule_check,
    rule_create,
    rule_set_enabled,
    rule_update,
    webhook_url_hint,
)
from gateway.models import Environment
from staff import crypto, roles
from staff.changes import change_propose, register_change_kind
from staff.errors import ServiceError
from staff.models import ChangeProposal, StaffUser

CREATE_KIND = "alerts.rule_create"
CHANGE_KIND = "alerts.rule_change"
ENABLED_KIND = "alerts.rule_enabled"
KINDS = (CREATE_KIND, CHANGE_KIND, ENABLED_KIND)

# What a change proposal shows, field by field (the webhook as its hint, never the URL).
SHOWN = ("name", "thresholds", "environment", "severity", "webhook")


def rule_version(rule: AlertRule) -> str:
    """The rule's fields and webhook URL, keyed-hashed: any change since gives another; a key
    rotation (the same URL under another key) does not. A URL no key reads any more counts by
    its stored ciphertext, so the rule can still be given a new one."""
    webhook = rule.webhook_url_encrypted
    if webhook:
        try:
            webhook = crypto.decrypt(webhook)
        except crypto.SecretDecryptionError:
            webhook = "unreadable:" + webhook
    state = {**rule.snapshot(), "webhook_url": webhook}
    return crypto.secrets_version("alert_rule", json.dumps(state, sort_keys=True, default=str))


def _rule_of(proposal: ChangeProposal) -> AlertRule | None:
    return (
        AlertRule.objects.select_related("environment").filter(pk=proposal.payload["rule"]).first()
    )


def _version(proposal: ChangeProposal) -> str:
    rule = _rule_of(proposal)
    return rule_version(rule) if rule is not None else "gone"


def _new_rule_version(proposal: ChangeProposal) -> str:
    return "new"  # nothing exists yet that could have changed


def _shown(fields: dict[str, Any], *, hint: str) -> dict[str, Any]:
    environment = fields["environment"]
    return {
        "name": fields["name"],
        "thresholds": dict(fields["thresholds"]),
        "environment": environment.name if environment is not None else None,
        "severity": fields["severity"],
        "webhook": hint,
    }


def _encrypted(url: str) -> str:
    return crypto.encrypt(url) if url else ""


def _environment(pk: int | None) -> Environment | None:
    """The proposal's environment; gone since, the proposal fails (a refusal, not a crash)."""
    if pk is None:
        return None
    environment = Environment.objects.filter(pk=pk).first()
    if environment is None:
        raise ServiceError(
            gettext("The rule's environment no longer exists."),
            errors=[("environment", gettext("no longer exists"))],
        )
    return environment


# --- Proposing ----------------------------------------------------------------------------------


def rule_create_propose(
    *,
    by: StaffUser,
    name: str,
    kind: str,
    thresholds: dict[str, Any],
    environment: Environment | None,
    severity: str = Severity.WARNING,
    enabled: bool = True,
    webhook_url: str = "",
) -> ChangeProposal:
    """Propose a new rule; it is created (by the proposer) once another admin approves it."""
    require(by, roles.ALERTS_MANAGE)
    fields = rule_check(
        kind=kind,
        name=name,
        thresholds=thresholds,
        environment=environment,
        severity=severity,
        webhook_url=webhook_url,
    )
    url = fields["webhook_url"]
    after = {
        **_shown(fields, hint=webhook_url_hint(url) if url else ""),
        "kind": kind,
        "enabled": enabled,
    }
    environment = fields["environment"]
    return change_propose(
        kind=CREATE_KIND,
        by=by,
        target_label=fields["name"],
        creates=fields["name"],
        summary=f"Create the alert rule {fields['name']} ({kind})",
        before={},
        after=after,
        payload={
            "name": fields["name"],
            "kind": kind,
            "thresholds": fields["thresholds"],
            "environment": environment.pk if environment is not None else None,
            "severity": fields["severity"],
            "enabled": enabled,
            # Encrypted here; decrypted only to apply.
            "webhook_url": _encrypted(url),
        },
    )


def rule_change_propose(
    *,
    rule: AlertRule,
    by: StaffUser,
    name: str,
    thresholds: dict[str, Any],
    environment: Environment | None,
    severity: str,
    webhook_url: str | None = None,
    webhook_remove: bool = False,
) -> ChangeProposal:
    """Propose changing a rule (as `rule_update` takes it: `webhook_url` None keeps the webhook,
    `webhook_remove` removes it); it applies once another admin approves it."""
    require(by, roles.ALERTS_MANAGE)
    rule = AlertRule.objects.select_related("environment").get(pk=rule.pk)
    condition_get(rule.kind)
    new_url = "" if webhook_remove else webhook_url or ""
    fields = rule_check(
        kind=rule.kind,
        name=name,
        thresholds=thresholds,
        environment=environment,
        severity=severity,
        webhook_url=new_url,
    )
    current = rule.snapshot()
    if webhook_remove:
        hint = ""
    elif fields["webhook_url"]:
        hint = webhook_url_hint(fields["webhook_url"])
    else:
        hint = current["webhook"]
    proposed = _shown(fields, hint=hint)
    changed = [key for key in SHOWN if proposed[key] != current[key]]
    if fields["webhook_url"] and "webhook" not in changed:
        changed.append("webhook")  # another URL with the same hint: still a new destination
    if not changed:
        raise ServiceError(
            gettext("Nothing to change: the rule already has these values."), code="no_change"
        )
    after = {key: proposed[key] for key in changed}
    if "webhook" in changed and fields["webhook_url"]:
        after["webhook"] = f"{hint} (new URL)"  # a record, in English like the summary
    return change_propose(
        kind=CHANGE_KIND,
        by=by,
        target=rule,
        target_label=rule.name,
        summary=f"Change the alert rule {rule.name} ({', '.join(changed)})",
        before={key: current[key] for key in changed},
        after=after,
        payload={
            "rule": rule.pk,
            "name": fields["name"],
            "thresholds": fields["thresholds"],
            "environment": fields["environment"].pk if fields["environment"] else None,
            "severity": fields["severity"],
            "webhook_url": _encrypted(fields["webhook_url"]),
            "webhook_remove": webhook_remove,
        },
    )


def rule_enabled_propose(*, rule: AlertRule, by: StaffUser, enabled: bool) -> ChangeProposal:
    """Propose enabling or disabling a rule; it applies once another admin approves it."""
    require(by, roles.ALERTS_MANAGE)
    rule = AlertRule.objects.get(pk=rule.pk)
    if rule.enabled == enabled:
        raise ServiceError(
            gettext("This rule is already enabled.")
            if enabled
            else gettext("This rule is already disabled."),
            code="no_change",
            status=409,
        )
    verb = "Enable" if enabled else "Disable"
    return change_propose(
        kind=ENABLED_KIND,
        by=by,
        target=rule,
        target_label=rule.name,
        summary=f"{verb} the alert rule {rule.name}",
        before={"enabled": rule.enabled},
        after={"enabled": enabled},
        payload={"rule": rule.pk, "enabled": enabled},
    )


# --- Applying (inside the approval's transaction, audited with the proposal) --------------------


def _create_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    payload = proposal.payload
    rule_create(
        by=by,
        created_by=proposal.proposed_by,
        name=payload["name"],
        kind=payload["kind"],
        thresholds=payload["thresholds"],
        environment=_environment(payload["environment"]),
        severity=payload["severity"],
        enabled=bool(payload["enabled"]),
        webhook_url=crypto.decrypt(payload["webhook_url"]) if payload["webhook_url"] else "",
    )


def _change_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    payload = proposal.payload
    rule = AlertRule.objects.get(pk=payload["rule"])
    rule_update(
        rule=rule,
        by=by,
        name=payload["name"],
        thresholds=payload["thresholds"],
        environment=_environment(payload["environment"]),
        severity=payload["severity"],
        webhook_url=crypto.decrypt(payload["webhook_url"]) if payload["webhook_url"] else None,
        webhook_remove=bool(payload["webhook_remove"]),
    )


def _enabled_apply(proposal: ChangeProposal, *, by: StaffUser | None) -> None:
    rule = AlertRule.objects.get(pk=proposal.payload["rule"])
    rule_set_enabled(rule=rule, enabled=bool(proposal.payload["enabled"]), by=by)


def register_alert_change_kinds() -> None:
    register_change_kind(
        CREATE_KIND,
        apply=_create_apply,
        version=_new_rule_version,
        label=gettext_lazy("New alert rule"),
        secret_keys=("webhook_url",),
    )
    register_change_kind(
        CHANGE_KIND,
        apply=_change_apply,
        version=_version,
        label=gettext_lazy("Alert rule"),
        secret_keys=("webhook_url",),
    )
    register_change_kind(
        ENABLED_KIND,
        apply=_enabled_apply,
        version=_version,
        label=gettext_lazy("Alert rule on or off"),
    )
