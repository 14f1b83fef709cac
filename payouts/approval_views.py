"""Maker-checker pages: the payout's live panel and its actions, the approval inbox, the policy."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from console.lists import is_htmx
from gateway.selectors import environment_current
from payouts import selectors
from payouts.approval_policy import approval_policy_current, approval_policy_publish
from payouts.approval_selectors import (
    SCOPE_ANYONE,
    SCOPE_MINE,
    approval_inbox,
    approvals_history,
    policy_impact,
    valid_approvals,
)
from payouts.approvals import (
    CANCELLABLE,
    approval_facts,
    payout_approve,
    payout_cancel,
    payout_reject,
)
from payouts.errors import REFUSALS, refusal_text
from payouts.initiation import payout_retry
from payouts.models import ApprovalPolicy, ApprovalRule, Payout, PayoutStatus
from payouts.otp_views import release_step_context
from payouts.policy import RuleSpec, approval_decide
from payouts.qr import deposit_qr_svg
from payouts.selectors import require_payout_reader
from payouts.waiting import wait_text
from staff.models import AuditEntry
from staff.requests import staff_of
from staff.roles import APPROVAL_POLICY_MANAGE, PAYOUT_APPROVE, PAYOUT_INITIATE

S = PayoutStatus


def _payout(request: HttpRequest, pk: int) -> Payout:
    try:
        return selectors.payout_detail(environment=environment_current(user=request.user), pk=pk)
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None


class RejectForm(forms.Form):
    reason = forms.CharField(
        max_length=500, widget=forms.Textarea(attrs={"rows": 2}), label="Reason for the maker"
    )


@dataclass(frozen=True)
class TimelineRow:
    """One entry of includes/timeline.html: a move (applied) or an upstream report that did not
    move the payout (not applied, with the reason in its note)."""

    at: datetime | None
    status: str
    kind: str  # ChangeSource: "event" entries show in the upstream's tone
    source: str
    by: str
    note: str
    applied: bool
    event_id: str = ""

    def get_kind_display(self) -> str:
        return self.source

    @property
    def summary(self) -> str:
        text = self.status if self.applied else f"{self.status} reported, not applied"
        if self.by:
            text += f" by {self.by}"
        return f"{text}: {self.note}" if self.note else text


def timeline(payout: Payout) -> list[TimelineRow]:
    """Every move with its source, plus the upstream reports that did not move it (why)."""
    rows = [
        TimelineRow(
            at=change.at,
            status=change.get_to_status_display(),
            kind=change.source,
            source=change.get_source_display(),
            by=change.by.email if change.by else "",
            note=change.reason,
            applied=True,
            event_id=change.event_id,
        )
        for change in payout.status_changes.select_related("by")
    ]
    rows += [
        TimelineRow(
            at=event.occurred_at or event.received_at,
            status=event.get_status_display(),
            kind=event.source,
            source=event.get_source_display(),
            by="",
            note=f"{event.event_type}: {event.note}",
            applied=False,
            event_id=event.event_id,
        )
        for event in payout.events.filter(applied=False)
    ]
    waiting = wait_text(payout)
    if waiting:  # the initiation waits to be sent again: the latest line, live
        rows.append(
            TimelineRow(
                at=payout.upstream_wait_since,
                status=payout.get_status_display(),
                kind="system",
                source="System",
                by="",
                note=waiting,
                applied=True,
            )
        )
    return sorted(rows, key=lambda row: row.at or timezone.now())


def live_context(request: HttpRequest, payout: Payout, **extra: Any) -> dict[str, Any]:
    user = staff_of(request)
    now = timezone.now()
    decision = approval_decide(
        approval_facts(payout), approver_id=user.pk, has_permission=user.has_perm(PAYOUT_APPROVE)
    )
    is_approver = user.has_perm(PAYOUT_APPROVE)
    deposit: dict[str, Any] = payout.deposit_instructions or {}
    deposit_expires = None
    if deposit.get("expires_at"):
        deposit_expires = datetime.fromisoformat(str(deposit["expires_at"]))
    approvals = valid_approvals(payout)
    return {
        "payout": payout,
        "now": now,
        "approvals": approvals,
        "approval_count_label": f"{len(approvals)} of {payout.approvals_required}",
        "approvals_history": approvals_history(payout),
        "can_approve": decision.allowed,
        "approve_refusal": decision.message
        if is_approver and payout.status == S.PENDING_APPROVAL
        else "",
        "can_reject": is_approver
        and payout.status == S.PENDING_APPROVAL
        and user.pk not in (payout.maker_id, payout.recipient.created_by_id),
        "can_cancel": payout.status in CANCELLABLE
        and (is_approver or (user.pk == payout.maker_id and user.has_perm(PAYOUT_INITIATE))),
        "can_resend": is_approver and payout.status == S.SUBMITTING,
        "can_requote": user.pk == payout.maker_id
        and user.has_perm(PAYOUT_INITIATE)
        and payout.status in (S.PENDING_APPROVAL, S.APPROVED)
        and bool(payout.preview_quote_id)
        and not payout.quote_id,
        "deposit": deposit,
        "deposit_qr": deposit_qr_svg(deposit["wallet_address"])
        if deposit.get("wallet_address")
        else "",
        "deposit_expires": deposit_expires,
        "deposit_expired": bool(deposit_expires and deposit_expires <= now),
        "timeline_rows": timeline(payout),
        # While the gateway retries (the recovery's wait is said by initiation_error).
        "upstream_wait": wait_text(payout) if payout.upstream_wait_attempt else "",
        "audit": AuditEntry.objects.filter(target_type="payouts.payout", target_id=str(payout.pk))
        .select_related("actor")
        .order_by("at", "pk"),
        "reject_form": extra.pop("reject_form", None) or RejectForm(),
        # The release step (code sent, tries, expiry, any sandbox hint): payouts.otp_views.
        **release_step_context(request, payout),
        **extra,
    }


def _live(request: HttpRequest, pk: int, **extra: Any) -> HttpResponse:
    payout = _payout(request, pk)
    context = live_context(request, payout, **extra)
    if is_htmx(request):
        return render(request, "payouts/payout_live.html", context)
    return redirect("payouts:detail", pk=pk)


@login_required
def payout_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The live region of the payout page, re-fetched when the payout changes."""
    require_payout_reader(staff_of(request))
    payout = _payout(request, pk)
    return render(request, "payouts/payout_live.html", live_context(request, payout))


def _act(request: HttpRequest, pk: int, action: Any, ok: str, **form_errors: Any) -> HttpResponse:
    try:
        action()
    except REFUSALS as exc:
        error = refusal_text(exc)
        if isinstance(exc, PermissionDenied) or not is_htmx(request):
            messages.error(request, error)
        return _live(request, pk, action_error=error, **form_errors)
    if not is_htmx(request):
        messages.success(request, ok)
    return _live(request, pk, action_ok=ok)


@require_POST
@login_required
def approve_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _payout(request, pk)
    by = staff_of(request)
    return _act(request, pk, lambda: payout_approve(payout=payout, by=by), "Approved.")


@require_POST
@login_required
def reject_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _payout(request, pk)
    form = RejectForm(request.POST)
    if not form.is_valid():
        return _live(request, pk, reject_form=form)
    return _act(
        request,
        pk,
        lambda: payout_reject(
            payout=payout, by=staff_of(request), reason=form.cleaned_data["reason"]
        ),
        "Rejected: the payout went back to its maker.",
        reject_form=form,
    )


@require_POST
@login_required
def requote_view(request: HttpRequest, pk: int) -> HttpResponse:
    from payouts.approvals import payout_requote

    payout = _payout(request, pk)
    return _act(
        request,
        pk,
        lambda: payout_requote(payout=payout, by=staff_of(request)),
        "Re-quoted: approvals are kept only if the figures stayed within the tolerance.",
    )


@require_POST
@login_required
def cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _payout(request, pk)
    by = staff_of(request)
    return _act(request, pk, lambda: payout_cancel(payout=payout, by=by), "Cancelled.")


@require_POST
@login_required
def resend_view(request: HttpRequest, pk: int) -> HttpResponse:
    payout = _payout(request, pk)
    return _act(
        request,
        pk,
        lambda: payout_retry(payout=payout, by=staff_of(request)),
        "Re-sending with the same idempotency key.",
    )


# --- Notifications (dashboard) ------------------------------------------------------------------


def dashboard_panel_context(request: HttpRequest) -> dict[str, Any]:
    from payouts.approval_selectors import waiting_count
    from payouts.notifications import notifications_unread

    user = staff_of(request)
    can_approve = user.has_perm(PAYOUT_APPROVE)
    return {
        "can_approve": can_approve,
        "waiting": waiting_count(user, environment_current(user=user)) if can_approve else 0,
        "notifications": notifications_unread(user),
    }


@require_POST
@login_required
def notifications_read_view(request: HttpRequest) -> HttpResponse:
    from payouts.models import PayoutNotification

    PayoutNotification.objects.filter(recipient=staff_of(request), read_at__isnull=True).update(
        read_at=timezone.now()
    )
    return redirect("console:dashboard")


# --- The approval inbox -------------------------------------------------------------------------


@dataclass(frozen=True)
class BulkResult:
    payout_id: int
    ok: bool
    message: str


@login_required
def approval_inbox_view(request: HttpRequest) -> HttpResponse:
    user = staff_of(request)
    require_payout_reader(user)
    scope = request.GET.get("scope") or SCOPE_MINE
    if scope not in (SCOPE_MINE, SCOPE_ANYONE):
        scope = SCOPE_MINE
    rows = list(approval_inbox(user=user, environment=environment_current(user=user), scope=scope))
    can_approve = user.has_perm(PAYOUT_APPROVE)
    context = {
        "rows": rows,
        "scope": scope,
        "can_approve": can_approve,
        "empty_message": f"Nothing is waiting{' for you' if scope == SCOPE_MINE else ''}.",
    }
    return render(request, "payouts/approval_inbox.html", context)


@require_POST
@login_required
def bulk_approve_view(request: HttpRequest) -> HttpResponse:
    """Approve several at once after one confirmation; each is decided on its own."""
    user = staff_of(request)
    ids = [int(value) for value in request.POST.getlist("payout") if value.isdigit()]
    if request.POST.get("confirm") != "yes":
        selected = list(
            approval_inbox(
                user=user, environment=environment_current(user=user), scope=SCOPE_ANYONE
            ).filter(pk__in=ids)
        )
        return render(request, "payouts/approval_confirm.html", {"selected": selected, "ids": ids})
    results = []
    for payout_id in ids:
        try:
            payout = _payout(request, payout_id)
            outcome = payout_approve(payout=payout, by=user)
        except (*REFUSALS, Http404) as exc:
            results.append(BulkResult(payout_id, False, refusal_text(exc)))
            continue
        done = "approved" if outcome.complete else f"{outcome.approvals} of {outcome.required}"
        results.append(BulkResult(payout_id, True, done))
    return render(request, "payouts/approval_results.html", {"results": results})


# --- The approval policy (admins) ---------------------------------------------------------------


class PolicyForm(forms.Form):
    """The whole policy as lines: `min_amount currency rail mode approvers` (`*` for any)."""

    default_required = forms.IntegerField(min_value=1, max_value=10, initial=1)
    rules = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="One rule a line: minimum amount, currency, rail, mode, approvers; * is any. "
        "Example: 10000 USD * * 2",
    )
    note = forms.CharField(required=False, max_length=255)

    def clean_rules(self) -> list[RuleSpec]:
        specs = []
        for number, line in enumerate(self.cleaned_data["rules"].splitlines(), start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 5:
                raise forms.ValidationError(
                    f"Line {number}: five values (amount currency rail mode approvers)."
                )
            amount, currency, rail, mode, required = parts
            try:
                minimum = Decimal(amount)
                count = int(required)
            except (InvalidOperation, ValueError):
                raise forms.ValidationError(
                    f"Line {number}: the amount and the approvers are numbers."
                ) from None
            if minimum < 0 or count < 1:
                raise forms.ValidationError(f"Line {number}: amount ≥ 0 and approvers ≥ 1.")
            if mode not in ("*", "fiat", "crypto"):
                raise forms.ValidationError(f"Line {number}: mode is fiat, crypto or *.")
            specs.append(
                RuleSpec(
                    required_approvals=count,
                    min_amount=minimum,
                    currency="" if currency == "*" else currency.upper(),
                    rail="" if rail == "*" else rail.upper(),
                    mode="" if mode == "*" else mode,
                )
            )
        return specs


def _rule_line(rule: ApprovalRule) -> str:
    return " ".join(
        [
            str(rule.min_amount),
            rule.currency or "*",
            rule.rail or "*",
            rule.mode or "*",
            str(rule.required_approvals),
        ]
    )


@login_required
def approval_policy_view(request: HttpRequest) -> HttpResponse:
    user = staff_of(request)
    if not user.has_perm(APPROVAL_POLICY_MANAGE):
        raise PermissionDenied("The approval policy is managed by admins.")
    current = approval_policy_current()
    impact = None
    if request.method == "POST":
        form = PolicyForm(request.POST)
        if form.is_valid():
            rules, default = form.cleaned_data["rules"], form.cleaned_data["default_required"]
            impact = policy_impact(rules=rules, default=default)
            if request.POST.get("action") == "publish":
                policy = approval_policy_publish(
                    by=user, default_required=default, rules=rules, note=form.cleaned_data["note"]
                )
                messages.success(
                    request,
                    f"Version {policy.version} published: payouts submitted from now on follow "
                    f"it; {len(impact)} pending payout(s) keep their earlier count.",
                )
                current = policy
    else:
        form = PolicyForm(
            initial={
                "default_required": current.default_required if current else 1,
                "rules": "\n".join(_rule_line(r) for r in current.rules.all()) if current else "",
            }
        )
    return render(
        request,
        "payouts/approval_policy.html",
        {
            "form": form,
            "current": current,
            "impact": impact,
            "versions": ApprovalPolicy.objects.select_related("created_by")[:10],
        },
    )
