"""Pages of alerts: the history (filters, acknowledge), the rules (admins propose creating,
editing, enabling and disabling them: admin changes another admin approves, alerts.rule_changes),
and the person's own subscriptions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from alerts import rule_changes, selectors, services
from alerts.conditions import CONDITIONS, Condition, condition_get
from alerts.forms import AlertFilterForm, RuleForm, SubscriptionForm
from alerts.models import AlertRule
from console.lists import list_template, page_of
from gateway.models import Environment
from staff import roles
from staff.changes import proposal_message
from staff.errors import ServiceError
from staff.models import ChangeProposal
from staff.requests import staff_of
from staff.step_up import StepUpRequired


def _environments() -> list[tuple[str, str]]:
    return [(e.name, e.name) for e in Environment.objects.filter(is_active=True).order_by("name")]


def _environment_named(name: str) -> Environment | None:
    return Environment.objects.filter(name=name, is_active=True).first() if name else None


def _proposed(request: HttpRequest, proposal: ChangeProposal) -> None:
    """Say where the proposed change stands (waiting for another admin, or applied at once)."""
    if proposal.state == ChangeProposal.State.FAILED:
        messages.error(request, proposal_message(proposal))
    else:
        messages.success(request, proposal_message(proposal))


def _threshold_fields(condition: Condition) -> dict[str, str]:
    """The service names a threshold's error `thresholds.<name>`; the form's field is
    `threshold_<name>`."""
    return {"thresholds." + t.name: "threshold_" + t.name for t in condition.thresholds}


@login_required
@permission_required(roles.ALERTS_VIEW, raise_exception=True)
def history(request: HttpRequest) -> HttpResponse:
    form = AlertFilterForm(request.GET or None, environments=_environments())
    if form.is_bound:
        form.is_valid()
    filters = form.filters()
    alerts = selectors.alert_list(
        user=staff_of(request),
        state=filters["state"],
        kind=filters["kind"],
        environment=_environment_named(filters["environment"]),
    )
    page, query = page_of(request, alerts)
    context = {
        "form": form,
        "page": page,
        "query": query,
        "can_acknowledge": request.user.has_perm(roles.ALERTS_ACKNOWLEDGE),
    }
    return render(request, list_template(request, "alerts/history.html"), context)


@login_required
@require_POST
@permission_required(roles.ALERTS_ACKNOWLEDGE, raise_exception=True)
def acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    by = staff_of(request)
    try:
        services.alert_acknowledge(alert=selectors.alert_get(user=by, pk=pk), by=by)
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        messages.success(request, _("Alert acknowledged."))
    return redirect("alerts:history")


@login_required
@permission_required(roles.ALERTS_VIEW, raise_exception=True)
def rule_list(request: HttpRequest) -> HttpResponse:
    rules, new_rules_waiting = selectors.rules_with_changes_waiting(user=staff_of(request))
    context = {
        "rules": rules,
        "new_rules_waiting": new_rules_waiting,
        "can_manage": request.user.has_perm(roles.ALERTS_MANAGE),
        "conditions": selectors.conditions(),
    }
    return render(request, "alerts/rules.html", context)


def _rule_form_page(request: HttpRequest, form: RuleForm, rule: AlertRule | None) -> HttpResponse:
    context = {"form": form, "rule": rule, "condition": form.condition}
    return render(request, "alerts/rule_form.html", context)


@login_required
@permission_required(roles.ALERTS_MANAGE, raise_exception=True)
def rule_new(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind") or request.POST.get("kind") or ""
    if kind not in CONDITIONS:
        return render(request, "alerts/rule_kinds.html", {"conditions": selectors.conditions()})
    condition = condition_get(kind)
    if request.method != "POST":
        form = RuleForm(condition=condition, environments=_environments())
        return _rule_form_page(request, form, None)
    form = RuleForm(request.POST, condition=condition, environments=_environments())
    if form.is_valid():
        data = form.cleaned_data
        try:
            proposal = rule_changes.rule_create_propose(
                by=staff_of(request),
                name=data["name"],
                kind=kind,
                thresholds=form.thresholds(),
                environment=_environment_named(data.get("environment") or ""),
                severity=data["severity"],
                webhook_url=data.get("webhook_url") or "",
            )
        except StepUpRequired:
            raise  # staff.middleware.StepUpMiddleware sends the person to the step-up prompt
        except ServiceError as exc:
            exc.add_to_form(form, rename=_threshold_fields(condition))
        else:
            _proposed(request, proposal)
            return redirect("alerts:rules")
    return _rule_form_page(request, form, None)


@login_required
@permission_required(roles.ALERTS_MANAGE, raise_exception=True)
def rule_edit(request: HttpRequest, pk: int) -> HttpResponse:
    by = staff_of(request)
    rule = selectors.rule_get(user=by, pk=pk)
    condition = condition_get(rule.kind)
    initial: dict[str, Any] = {
        "name": rule.name,
        "environment": rule.environment.name if rule.environment else "",
        "severity": rule.severity,
        **{f"threshold_{name}": value for name, value in rule.thresholds.items()},
    }
    if request.method != "POST":
        form = RuleForm(
            initial=initial, condition=condition, environments=_environments(), editing=True
        )
        return _rule_form_page(request, form, rule)
    form = RuleForm(request.POST, condition=condition, environments=_environments(), editing=True)
    if form.is_valid():
        data = form.cleaned_data
        try:
            proposal = rule_changes.rule_change_propose(
                rule=rule,
                by=by,
                name=data["name"],
                thresholds=form.thresholds(),
                environment=_environment_named(data.get("environment") or ""),
                severity=data["severity"],
                webhook_url=data.get("webhook_url") or None,
                webhook_remove=bool(data.get("webhook_remove")),
            )
        except StepUpRequired:
            raise
        except ServiceError as exc:
            exc.add_to_form(form, rename=_threshold_fields(condition))
        else:
            _proposed(request, proposal)
            return redirect("alerts:rules")
    return _rule_form_page(request, form, rule)


@login_required
@require_POST
@permission_required(roles.ALERTS_MANAGE, raise_exception=True)
def rule_toggle(request: HttpRequest, pk: int) -> HttpResponse:
    by = staff_of(request)
    rule = selectors.rule_get(user=by, pk=pk)
    enabled = request.POST.get("enabled") == "1"
    try:
        proposal = rule_changes.rule_enabled_propose(rule=rule, enabled=enabled, by=by)
    except StepUpRequired:
        raise
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        _proposed(request, proposal)
    return redirect("alerts:rules")


@login_required
@permission_required(roles.ALERTS_VIEW, raise_exception=True)
def subscriptions(request: HttpRequest) -> HttpResponse:
    """The person's own choices: each enabled rule, immediately, in the digest, or not at all."""
    user = staff_of(request)
    if request.method == "POST":
        rule = selectors.rule_get(user=user, pk=_int(request.POST.get("rule")))
        form = SubscriptionForm(request.POST)
        if not form.is_valid():
            raise PermissionDenied
        services.subscription_set(user=user, rule=rule, mode=form.cleaned_data["mode"] or None)
        messages.success(request, _("Your choice for “%(rule)s” is saved.") % {"rule": rule.name})
        return redirect("alerts:subscriptions")
    rows = [
        {"row": row, "form": SubscriptionForm(initial={"mode": row.mode or ""}, prefix=None)}
        for row in selectors.subscription_rows(user=user)
    ]
    return render(request, "alerts/subscriptions.html", {"rows": rows})


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0
