"""Webhook pages: endpoints (register, rotate), the live event log, an event's page, gaps."""

from __future__ import annotations

import json
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods, require_POST

from console.lists import fragment_template, list_template, page_of
from console.templatetags.ui import duration
from gateway.models import Environment
from staff.changes import proposal_message
from staff.errors import ServiceError
from staff.redaction import mask
from staff.step_up import StepUpRequired
from webhooks import selectors
from webhooks.forms import EventFilterForm
from webhooks.jsonjs import js_reserialise
from webhooks.models import (
    ReprocessRun,
    SignatureVerdict,
    SignedOver,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from webhooks.permissions import WEBHOOK_EVENTS_VIEW, WEBHOOKS_MANAGE
from webhooks.services import (
    receiver_url,
    webhook_reprocess_start,
)
from webhooks.services.endpoint_changes import webhook_endpoint_change_propose
from webhooks.services.endpoints import secret_fingerprint

PAGE_SIZE = 50


def _base_url(request: HttpRequest) -> str:
    from django.conf import settings

    return settings.WEBHOOKS_PUBLIC_BASE_URL or request.build_absolute_uri("/")


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
def endpoint_list(request: HttpRequest) -> HttpResponse:
    rows = []
    for row in selectors.endpoint_rows():
        endpoint = row["endpoint"]
        if endpoint is not None:
            try:
                row["url"] = receiver_url(endpoint, base_url=_base_url(request))
            except ServiceError as exc:  # a misconfigured WEBHOOKS_PUBLIC_BASE_URL
                row["url"], row["url_error"] = "", exc.message
            row["secret_masked"] = mask(endpoint.secret) if endpoint.secret_encrypted else ""
            row["previous_masked"] = (
                mask(endpoint.previous_secret) if endpoint.previous_accepted() else ""
            )
            row["pending"] = bool(endpoint.pending_secret_encrypted)
        rows.append(row)
    # The "send a test event" button exists only where the sandbox tools are installed.
    sandbox_tools = apps.is_installed("sandbox")
    return render(
        request, "webhooks/endpoints.html", {"rows": rows, "sandbox_tools": sandbox_tools}
    )


def _endpoint_action(request: HttpRequest, environment_pk: int, *, rotate: bool) -> HttpResponse:
    environment = get_object_or_404(Environment, pk=environment_pk)
    try:
        proposal = webhook_endpoint_change_propose(
            environment=environment, by=request.user, base_url=_base_url(request), rotate=rotate
        )
    except StepUpRequired:
        raise  # staff.middleware.StepUpMiddleware sends the person to the step-up prompt
    except ServiceError as exc:
        messages.error(request, exc.as_message())
    else:
        # An admin change (staff.changes): it waits for another admin (or the single-admin wait).
        if proposal.state == proposal.State.FAILED:
            messages.error(request, proposal_message(proposal))
        else:
            messages.success(request, proposal_message(proposal))
    return redirect("webhooks:endpoints")


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
@require_POST
def endpoint_register(request: HttpRequest, environment_pk: int) -> HttpResponse:
    return _endpoint_action(request, environment_pk, rotate=False)


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
@require_http_methods(["GET", "POST"])
def endpoint_rotate(request: HttpRequest, environment_pk: int) -> HttpResponse:
    """Rotate only once confirmed: GET (or a POST without `confirm=yes`) shows what a rotation
    does and how long the previous secret stays accepted; the confirm button posts `confirm=yes`.
    The API's rotate endpoint acts at once (a token holder means it)."""
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        return _endpoint_action(request, environment_pk, rotate=True)
    environment = get_object_or_404(Environment, pk=environment_pk)
    overlap = int(settings.WEBHOOKS_ROTATION_OVERLAP_SECONDS)
    context = {
        "environment": environment,
        "endpoint": WebhookEndpoint.objects.filter(environment=environment).first(),
        "overlap": duration(overlap, "s"),
    }
    return render(request, "webhooks/rotate_confirm.html", context)


def _filters(request: HttpRequest) -> tuple[EventFilterForm, dict[str, Any]]:
    form = EventFilterForm(request.GET or None)
    if not form.is_valid():
        return form, {}
    data = form.cleaned_data
    return form, {
        "q": data.get("q") or "",
        "event_type": data.get("event_type") or "",
        "status": data.get("status") or "",
        "object_kind": data.get("object_kind") or "",
        "environment": data.get("environment"),
        "received_from": data.get("received_from"),
        "received_to": data.get("received_to"),
    }


@login_required
@permission_required(WEBHOOK_EVENTS_VIEW, raise_exception=True)
def event_list(request: HttpRequest) -> HttpResponse:
    form, filters = _filters(request)
    rows: QuerySet[Any]
    if filters.get("status") == "invalid":
        shown = "refused"
        rows = selectors.refused_deliveries(
            environment=filters.get("environment"), q=filters.get("q", "")
        )
    else:
        shown = "page"
        rows = selectors.event_list(**filters)
    page, query = page_of(request, rows, PAGE_SIZE)
    context: dict[str, Any] = {
        "form": form,
        "query": query,
        "filters": filters,
        shown: page,
        "can_manage": request.user.has_perm(WEBHOOKS_MANAGE),
    }
    return render(request, list_template(request, "webhooks/event_list.html"), context)


@login_required
@permission_required(WEBHOOK_EVENTS_VIEW, raise_exception=True)
def event_row(request: HttpRequest, pk: int) -> HttpResponse:
    """One row of the log, for the live stream; empty when the event is outside the filters."""
    event = get_object_or_404(WebhookEvent.objects.select_related("environment"), pk=pk)
    _, filters = _filters(request)
    if (
        filters
        and filters.get("status") != "invalid"
        and not selectors.event_matches(event, filters)
    ):
        return HttpResponse("")
    return render(request, "webhooks/event_list.html#row", {"event": event, "live": True})


# The page of each kind of local object, tried before get_absolute_url and the admin.
LOCAL_PAGES = {
    "user": "users:detail",
    "virtual_account": "accounts:virtual_account_detail",
    "recipient": "accounts:recipient_detail",
    "payout": "payouts:detail",
    "quote": "quotes:detail",
}


def _link_url(link: Any) -> str:
    """Where a linked local object is shown (its page, else the admin), or "" if nowhere."""
    if link.content_type is None or not link.object_pk:
        return ""
    page = LOCAL_PAGES.get(link.kind)
    if page:
        try:
            return reverse(page, args=[link.object_pk])
        except NoReverseMatch:
            pass
    model = link.content_type.model_class()
    if model is None:
        return ""
    instance = model._default_manager.filter(pk=link.object_pk).first()
    if instance is not None and hasattr(instance, "get_absolute_url"):
        return str(instance.get_absolute_url())
    try:
        return reverse(
            f"admin:{link.content_type.app_label}_{link.content_type.model}_change",
            args=[link.object_pk],
        )
    except NoReverseMatch:
        return ""


@login_required
@permission_required(WEBHOOK_EVENTS_VIEW, raise_exception=True)
def event_detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        event = selectors.event_detail(pk=pk)
    except WebhookEvent.DoesNotExist:
        return render(request, "404.html", status=404)
    deliveries = [_delivery_bodies(delivery) for delivery in event.deliveries.all()]
    links = [{"link": link, "url": _link_url(link)} for link in event.links.all()]
    context = {
        "event": event,
        "pretty": json.dumps(event.payload, indent=2, ensure_ascii=False),
        "deliveries": deliveries,
        "attempts": list(event.attempt_log.all()),
        "links": links,
        "can_manage": request.user.has_perm(WEBHOOKS_MANAGE),
    }
    return render(request, "webhooks/event_detail.html", context)


def _delivery_bodies(delivery: WebhookDelivery) -> dict[str, Any]:
    raw = bytes(delivery.body)
    reserialised = ""
    if (
        delivery.signed_over == SignedOver.RESERIALISED
        or delivery.verdict != SignatureVerdict.VALID
    ):
        try:
            reserialised = js_reserialise(raw).decode("utf-8")
        except (ValueError, RecursionError):
            reserialised = "(the body is not JSON)"
    return {
        "delivery": delivery,
        "raw": raw.decode("utf-8", errors="replace"),
        "reserialised": reserialised,
    }


@login_required
@permission_required(WEBHOOK_EVENTS_VIEW, raise_exception=True)
def delivery_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """One delivery, refused ones included: what to compare when a secret looks wrong."""
    delivery = get_object_or_404(
        WebhookDelivery.objects.select_related("endpoint__environment", "event"), pk=pk
    )
    endpoint = delivery.endpoint
    fingerprints = {
        "current": secret_fingerprint(endpoint.secret) if endpoint.secret_encrypted else "",
        "previous": secret_fingerprint(endpoint.previous_secret)
        if endpoint.previous_accepted()
        else "",
    }
    context = {"item": _delivery_bodies(delivery), "fingerprints": fingerprints}
    return render(request, "webhooks/delivery_detail.html", context)


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
@require_POST
def event_reprocess(request: HttpRequest, pk: int) -> HttpResponse:
    event = get_object_or_404(WebhookEvent, pk=pk)
    run = webhook_reprocess_start(
        events=WebhookEvent.objects.filter(pk=event.pk),
        by=request.user,
        description=f"event {event.event_id}",
    )
    messages.info(request, f"Reprocessing {event.event_id}.")
    return redirect("webhooks:reprocess_progress", pk=run.pk)


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
@require_POST
def events_reprocess(request: HttpRequest) -> HttpResponse:
    """Re-run the events the current filters select (the "all failed" button sets status)."""
    form = EventFilterForm(request.POST)
    if not form.is_valid():
        messages.error(request, gettext("The filters are not valid."))
        return redirect("webhooks:events")
    request.GET = request.POST
    _, filters = _filters(request)
    if filters.get("status") == "invalid":
        messages.error(request, gettext("Refused deliveries have no event to reprocess."))
        return redirect("webhooks:events")
    events = selectors.event_list(**filters)
    described = ", ".join(f"{k}={v}" for k, v in filters.items() if v) or "all events"
    run = webhook_reprocess_start(events=events, by=request.user, description=described)
    return redirect("webhooks:reprocess_progress", pk=run.pk)


@login_required
@permission_required(WEBHOOKS_MANAGE, raise_exception=True)
def reprocess_progress(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(ReprocessRun, pk=pk)
    template = fragment_template(request, "webhooks/reprocess_progress.html", "progress")
    return render(request, template, {"run": run})


@login_required
@permission_required(WEBHOOK_EVENTS_VIEW, raise_exception=True)
def missed_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors.missed_list(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "webhooks/missed.html", {"page": page})
