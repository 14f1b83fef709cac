"""Approval pages: approve, reject, re-quote, cancel; the inbox and bulk approval; the policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_POST

from console.lists import filters_by_maker, query_without_page
from gateway.selectors import environment_current
from payouts import selectors as payout_selectors
from payouts.approval.forms import (
    InboxFilterForm,
    PolicyForm,
    RejectForm,
    WithdrawForm,
    limit_line,
    rule_line,
)
from payouts.approval.policy import PolicyInvalid, approval_policy_current
from payouts.approval.policy_changes import approval_policy_propose
from payouts.approval.selectors import (
    INBOX_SORT_DEFAULT,
    SCOPE_ANYONE,
    SCOPE_MINE,
    InboxFilters,
    approval_inbox,
    approval_inbox_page,
    policy_impact,
)
from payouts.approval.services import (
    payout_approval_withdraw,
    payout_approve,
    payout_cancel,
    payout_reject,
    payout_requote,
)
from payouts.errors import REFUSALS, refusal_text
from payouts.models import ApprovalPolicy
from payouts.pages import payout_of_request
from payouts.selectors import require_payout_reader
from payouts.views import live_action, live_region
from staff.changes import proposal_message
from staff.requests import staff_of
from staff.roles import APPROVAL_POLICY_MANAGE, PAYOUT_APPROVE
from staff.step_up import StepUpRequired


@require_POST
@login_required
def approve_view(request: HttpRequest, pk: int) -> HttpResponse:
    return live_action(
        request, pk, lambda p, by: payout_approve(payout=p, by=by), gettext("Approved.")
    )


@require_POST
@login_required
def reject_view(request: HttpRequest, pk: int) -> HttpResponse:
    form = RejectForm(request.POST)
    if not form.is_valid():
        payout_of_request(request, pk)  # 404 outside the environment
        return live_region(request, pk, reject_form=form)
    reason = form.cleaned_data["reason"]
    return live_action(
        request,
        pk,
        lambda p, by: payout_reject(payout=p, by=by, reason=reason),
        gettext("Rejected: the payout went back to its maker."),
        reject_form=form,
    )


@require_POST
@login_required
def withdraw_view(request: HttpRequest, pk: int) -> HttpResponse:
    """An approver takes back their own approval before the payout is released."""
    form = WithdrawForm(request.POST)
    if not form.is_valid():
        payout_of_request(request, pk)  # 404 outside the environment
        return live_region(request, pk, withdraw_form=form)
    reason = form.cleaned_data["reason"]
    return live_action(
        request,
        pk,
        lambda p, by: payout_approval_withdraw(payout=p, by=by, reason=reason),
        gettext("Your approval was withdrawn: the payout waits for that step again."),
        withdraw_form=form,
    )


@require_POST
@login_required
def requote_view(request: HttpRequest, pk: int) -> HttpResponse:
    ok = gettext("Re-quoted: approvals are kept only if the figures stayed within the tolerance.")
    return live_action(request, pk, lambda p, by: payout_requote(payout=p, by=by), ok)


@require_POST
@login_required
def cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    return live_action(
        request, pk, lambda p, by: payout_cancel(payout=p, by=by), gettext("Cancelled.")
    )


# --- Notifications (dashboard) ------------------------------------------------------------------


def dashboard_panel_context(request: HttpRequest) -> dict[str, Any]:
    from payouts.approval.notifications import notifications_unread
    from payouts.approval.selectors import waiting_count

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


@dataclass(frozen=True)
class BulkResult:
    payout_id: int
    ok: bool
    message: str


@login_required
def approval_inbox_view(request: HttpRequest) -> HttpResponse:
    """The inbox, a page at a time, filtered and ordered as the payout list is (console.lists)."""
    user = staff_of(request)
    require_payout_reader(user)
    environment = environment_current(user=user)
    form, values, maker = filters_by_maker(
        request, InboxFilterForm, payout_selectors.payout_makers(environment)
    )
    scope = values.get("scope") or SCOPE_MINE
    filters = InboxFilters(
        q=values.get("q") or "",
        maker=maker,
        corridor=values.get("corridor") or "",
        amount_min=values.get("amount_min"),
        amount_max=values.get("amount_max"),
        sort=values.get("sort") or INBOX_SORT_DEFAULT,
    )
    page = approval_inbox_page(
        user=user,
        environment=environment,
        scope=scope,
        filters=filters,
        number=request.GET.get("page"),
    )
    can_approve = user.has_perm(PAYOUT_APPROVE)
    context = {
        "form": form,
        "page": page,
        "query": query_without_page(request),
        "rows": page.object_list,
        "scope": scope,
        "can_approve": can_approve,
        "empty_message": (
            gettext("Nothing is waiting for you.")
            if scope == SCOPE_MINE
            else gettext("Nothing is waiting.")
        ),
    }
    return render(request, "payouts/approval_inbox.html", context)


@require_POST
@login_required
def bulk_approve_view(request: HttpRequest) -> HttpResponse:
    """Approve several at once after one confirmation; each is decided on its own."""
    user = staff_of(request)
    ids = [
        int(value)
        for value in request.POST.getlist("payout")
        if value.isascii() and value.isdigit()
    ]
    if request.POST.get("confirm") != "yes":
        selected = list(
            approval_inbox(
                user=user, environment=environment_current(user=user), scope=SCOPE_ANYONE
            ).filter(pk__in=ids)
        )
        opened = {  # the documents of these payouts this person opened (prefetched views)
            document.pk
            for payout in selected
            for document in payout.documents.all()
            if any(view.viewer_id == user.pk for view in document.views.all())
        }
        context = {"selected": selected, "ids": ids, "opened": opened}
        return render(request, "payouts/approval_confirm.html", context)
    results = []
    for payout_id in ids:
        try:
            payout = payout_of_request(request, payout_id)
            outcome = payout_approve(payout=payout, by=user)
        except StepUpRequired as exc:
            # Nothing was approved after this one; come back to the inbox (this page is a POST).
            exc.next_url = reverse("payouts:approvals")  # type: ignore[attr-defined]
            raise
        except (*REFUSALS, Http404) as exc:
            results.append(BulkResult(payout_id, False, refusal_text(exc)))
            continue
        done = "approved" if outcome.complete else f"{outcome.approvals} of {outcome.required}"
        results.append(BulkResult(payout_id, True, done))
    return render(request, "payouts/approval_results.html", {"results": results})


@login_required
def approval_policy_view(request: HttpRequest) -> HttpResponse:
    """The policy in force, a draft's impact preview on the payouts waiting now, publishing."""
    user = staff_of(request)
    if not user.has_perm(APPROVAL_POLICY_MANAGE):
        raise PermissionDenied(gettext("The approval policy is managed by admins."))
    current = approval_policy_current()
    impact = None
    if request.method == "POST":
        form = PolicyForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            rules, default = data["rules"], data["default_required"]
            impact = policy_impact(rules=rules, default=default, limits=data["limits"])
            if request.POST.get("action") == "publish":
                # An admin change (staff.changes): published once another admin approves it.
                try:
                    proposal = approval_policy_propose(
                        by=user,
                        default_required=default,
                        rules=rules,
                        note=data["note"],
                        limits=data["limits"],
                        recipient_approver_roles=data["recipient_approver_roles"],
                    )
                except PolicyInvalid as exc:
                    exc.add_to_form(form)
                else:
                    changed = sum(1 for row in impact if row.changed)
                    messages.success(
                        request,
                        proposal_message(proposal)
                        + " "
                        + ngettext(
                            "Payouts submitted after it is published follow it; %(count)s "
                            "waiting payout it would change keeps the chain it was submitted with.",
                            "Payouts submitted after it is published follow it; %(count)s "
                            "waiting payouts it would change keep the chain they were submitted "
                            "with.",
                            changed,
                        )
                        % {"count": changed},
                    )
                    current = approval_policy_current()
    else:
        form = PolicyForm(initial=policy_initial(current))
    return render(
        request,
        "payouts/approval_policy.html",
        {
            "form": form,
            "current": current,
            "current_limits": current.limit_specs() if current else [],
            "impact": impact,
            "versions": ApprovalPolicy.objects.select_related("created_by")[:10],
        },
    )


def policy_initial(current: ApprovalPolicy | None) -> dict[str, Any]:
    if current is None:
        return {"default_required": 1, "rules": "", "limits": ""}
    return {
        "default_required": current.default_required,
        "rules": "\n".join(rule_line(r) for r in current.rules.all()),
        "limits": "\n".join(limit_line(limit) for limit in current.limit_specs()),
        "recipient_approver_roles": current.recipient_approver_roles,
    }
