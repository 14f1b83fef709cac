"""The webhooks API: endpoints (register, rotate), the event log, an event, reprocessing, gaps."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.utils.translation import gettext
from ninja import Field, Query, Router, Schema, Status
from ninja.params.functions import Query as QueryParam

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, Limit, Offset
from console.inputs import Text
from gateway.api_support import ChangeOut
from gateway.models import Environment
from staff import roles
from staff.errors import ServiceError
from staff.redaction import mask
from webhooks import selectors
from webhooks.models import ReprocessRun, WebhookEvent
from webhooks.permissions import WEBHOOK_EVENTS_VIEW, WEBHOOKS_MANAGE
from webhooks.services import (
    receiver_url,
    webhook_reprocess_start,
)
from webhooks.services.endpoint_changes import webhook_endpoint_change_propose

router = Router(tags=["webhooks"])
MAX_LIMIT = 200


def _require(request: HttpRequest, permission: str) -> None:
    if not request.user.has_perm(permission):
        raise PermissionDenied(gettext("You do not have permission to do this."))


class EndpointOut(Schema):
    environment: str = Field(description="Environment name.")
    receiver_url: str | None = Field(description="Absolute URL registered upstream.")
    secret_masked: str = Field(description="The current secret, masked (never in full).")
    secret_set_at: datetime | None
    previous_secret_masked: str = Field(description="Masked previous secret while accepted.")
    previous_valid_until: datetime | None = Field(
        description="Until when the previous secret is still accepted."
    )
    rotation_pending: bool = Field(description="A new secret awaits the upstream's acceptance.")
    registered_at: datetime | None
    last_error: str


class EventOut(Schema):
    id: int
    environment: str
    event_id: str = Field(description="The upstream's evt_ id.")
    event_type: str
    status: str = Field(description="pending, processed, failed, unhandled or no_handler.")
    received_at: datetime
    processed_at: datetime | None
    attempts: int = Field(description="Processing attempts that ran a service.")
    delivery_count: int = Field(description="Deliveries received, duplicates included.")
    drift: list[dict[str, str]] = Field(description="Contract drift found in the event.")
    last_error: str


class LinkOut(Schema):
    kind: str = Field(description="user, virtual_account, payout, recipient, quote, ...")
    upstream_id: str
    model: str | None = Field(description="app_label.model of the local row, when stored.")
    object_id: str | None = Field(description="PayOps id of the local row, when stored.")
    touched: bool = Field(description="Changed by applying this event.")


class DeliveryOut(Schema):
    received_at: datetime
    verdict: str
    matched_secret: str = Field(description="current, previous or pending; empty if none.")
    signed_over: str = Field(description="raw or reserialised.")
    response_status: int
    duplicate: bool
    duration_ms: float
    reason: str


class AttemptOut(Schema):
    number: int
    started_at: datetime
    outcome: str
    trigger: str
    duration_ms: float
    error: str


class EventDetailOut(EventOut):
    payload: dict[str, Any] = Field(description="The envelope as received (parsed).")
    links: list[LinkOut]
    deliveries: list[DeliveryOut]
    attempts_log: list[AttemptOut]


class RunOut(Schema):
    id: int
    description: str
    total: int
    done: int
    failed: int
    finished_at: datetime | None


class EventFilters(Schema):
    q: Text = Field("", description="An evt_ id or any upstream object id.")
    event_type: str = ""
    status: str = Field("", description="processed, failed, unhandled, no_handler, pending, drift")
    object_kind: str = ""
    environment: str = Field("", description="Environment name; all when empty.")
    received_from: datetime | None = None
    received_to: datetime | None = None


class MissedOut(Schema):
    environment: str
    object_kind: str
    upstream_id: str
    previous_state: str
    observed_state: str
    expected_event: str
    source: str
    detected_at: datetime


def _filters(filters: EventFilters) -> dict[str, Any]:
    environment = None
    if filters.environment:
        environment = Environment.objects.filter(name=filters.environment).first()
        if environment is None:
            raise Http404("No environment has this name.")
    return {
        "q": filters.q,
        "event_type": filters.event_type,
        "status": filters.status,
        "object_kind": filters.object_kind,
        "environment": environment,
        "received_from": filters.received_from,
        "received_to": filters.received_to,
    }


def _event_out(event: WebhookEvent) -> dict[str, Any]:
    return {
        "id": event.pk,
        "environment": event.environment.name,
        "event_id": event.event_id,
        "event_type": event.event_type,
        "status": event.status,
        "received_at": event.received_at,
        "processed_at": event.processed_at,
        "attempts": event.attempts,
        "delivery_count": event.delivery_count,
        "drift": event.drift,
        "last_error": event.last_error,
    }


def _run_out(run: ReprocessRun) -> RunOut:
    return RunOut.model_validate(run)


def _endpoint_out(request: HttpRequest, environment: Environment) -> EndpointOut:
    from django.conf import settings

    endpoint = getattr(environment, "webhook_endpoint", None)
    base = settings.WEBHOOKS_PUBLIC_BASE_URL or request.build_absolute_uri("/")
    if endpoint is None:
        return EndpointOut(
            environment=environment.name,
            receiver_url=None,
            secret_masked="",
            secret_set_at=None,
            previous_secret_masked="",
            previous_valid_until=None,
            rotation_pending=False,
            registered_at=None,
            last_error="",
        )
    previous = endpoint.previous_accepted()
    try:
        url: str | None = receiver_url(endpoint, base_url=base)
    except ServiceError:  # a misconfigured WEBHOOKS_PUBLIC_BASE_URL: listed without a URL
        url = None
    return EndpointOut(
        environment=environment.name,
        receiver_url=url,
        secret_masked=mask(endpoint.secret) if endpoint.secret_encrypted else "",
        secret_set_at=endpoint.secret_set_at,
        previous_secret_masked=mask(endpoint.previous_secret) if previous else "",
        previous_valid_until=endpoint.previous_valid_until if previous else None,
        rotation_pending=bool(endpoint.pending_secret_encrypted),
        registered_at=endpoint.registered_at,
        last_error=endpoint.last_error,
    )


@router.get("/endpoints", response={200: list[EndpointOut], **ERROR_RESPONSES})
@needs(roles.WEBHOOKS_MANAGE)
def endpoint_list(request: HttpRequest) -> list[EndpointOut]:
    """Each environment's receiver URL and masked secrets (admins)."""
    _require(request, WEBHOOKS_MANAGE)
    environments = Environment.objects.select_related("webhook_endpoint").order_by("name")
    return [_endpoint_out(request, environment) for environment in environments]


def _environment(environment_id: int) -> Environment:
    environment = Environment.objects.filter(pk=environment_id).first()
    if environment is None:
        raise Http404("No environment has this id.")
    return environment


def _endpoint_change(request: HttpRequest, environment_id: int, *, rotate: bool) -> Any:
    """Propose the registration (or rotation): an admin change another admin approves (202)."""
    environment = _environment(environment_id)
    base = request.build_absolute_uri("/")
    proposal = webhook_endpoint_change_propose(
        environment=environment, by=request.user, base_url=_base(base), rotate=rotate
    )
    return Status(202, ChangeOut.of(proposal))


@router.post("/endpoints/{environment_id}/register", response={202: ChangeOut, **ERROR_RESPONSES})
@needs(roles.WEBHOOKS_MANAGE)
def endpoint_register(request: HttpRequest, environment_id: int) -> Any:
    """Propose registering the environment's receiver upstream (a first secret is generated when
    it applies): 202 with the admin change (`/changes/{id}`), applied once another admin
    approves it."""
    return _endpoint_change(request, environment_id, rotate=False)


@router.post("/endpoints/{environment_id}/rotate", response={202: ChangeOut, **ERROR_RESPONSES})
@needs(roles.WEBHOOKS_MANAGE)
def endpoint_rotate(request: HttpRequest, environment_id: int) -> Any:
    """Propose a new secret (the previous one stays accepted for the overlap window once it
    applies): 202 with the admin change."""
    return _endpoint_change(request, environment_id, rotate=True)


def _base(fallback: str) -> str:
    from django.conf import settings

    return str(settings.WEBHOOKS_PUBLIC_BASE_URL or fallback)


@router.get("/events", response={200: list[EventOut], **ERROR_RESPONSES})
@needs(roles.WEBHOOK_EVENTS_VIEW)
def event_list(
    request: HttpRequest,
    filters: Query[EventFilters],
    offset: int = Offset,
    limit: int = Limit,
) -> list[dict[str, Any]]:
    """The event log, newest first, filtered like the page (`limit` at most 200)."""
    _require(request, WEBHOOK_EVENTS_VIEW)
    events = selectors.event_list(**_filters(filters))[offset : offset + limit]
    return [_event_out(event) for event in events]


# Before /events/{event_pk}: paths match in order, and an id is any text until ninja checks it
# (so a non-numeric id answers 400 in the one error shape, not Django's HTML 404).
@router.post("/events/reprocess", response={200: RunOut, **ERROR_RESPONSES})
@needs(roles.WEBHOOKS_MANAGE)
def events_reprocess(request: HttpRequest, filters: EventFilters) -> RunOut:
    """Re-run every event the filters select (`{"status": "failed"}`: all failed ones)."""
    events = selectors.event_list(**_filters(filters))
    described = ", ".join(f"{k}={v}" for k, v in filters.dict().items() if v) or "all events"
    return _run_out(webhook_reprocess_start(events=events, by=request.user, description=described))


@router.get("/events/{event_pk}", response={200: EventDetailOut, **ERROR_RESPONSES})
@needs(roles.WEBHOOK_EVENTS_VIEW)
def event_detail(request: HttpRequest, event_pk: int) -> dict[str, Any]:
    """One event with its payload, deliveries, processing attempts and linked objects."""
    _require(request, WEBHOOK_EVENTS_VIEW)
    try:
        event = selectors.event_detail(pk=event_pk)
    except WebhookEvent.DoesNotExist:
        raise Http404("No event has this id.") from None
    return {
        **_event_out(event),
        "payload": event.payload,
        "links": [
            {
                "kind": link.kind,
                "upstream_id": link.upstream_id,
                "model": link.content_type.natural_key()[0] + "." + link.content_type.model
                if link.content_type
                else None,
                "object_id": link.object_pk or None,
                "touched": link.touched,
            }
            for link in event.links.all()
        ],
        "deliveries": list(event.deliveries.all()),
        "attempts_log": list(event.attempt_log.all()),
    }


@router.post("/events/{event_pk}/reprocess", response={200: RunOut, **ERROR_RESPONSES})
@needs(roles.WEBHOOKS_MANAGE)
def event_reprocess(request: HttpRequest, event_pk: int) -> RunOut:
    """Re-run one event (queued; follow it at /runs/{id})."""
    event = WebhookEvent.objects.filter(pk=event_pk).first()
    if event is None:
        raise Http404("No event has this id.")
    run = webhook_reprocess_start(
        events=WebhookEvent.objects.filter(pk=event.pk),
        by=request.user,
        description=f"event {event.event_id}",
    )
    return _run_out(run)


@router.get("/runs/{run_pk}", response={200: RunOut, **ERROR_RESPONSES})
@needs(roles.WEBHOOKS_MANAGE)
def run_progress(request: HttpRequest, run_pk: int) -> RunOut:
    """Progress of a reprocessing run."""
    _require(request, WEBHOOKS_MANAGE)
    run = ReprocessRun.objects.filter(pk=run_pk).first()
    if run is None:
        raise Http404("No run has this id.")
    return _run_out(run)


@router.get("/missed", response={200: list[MissedOut], **ERROR_RESPONSES})
@needs(roles.WEBHOOK_EVENTS_VIEW)
def missed_list(
    request: HttpRequest, limit: int = QueryParam(100, ge=1, le=MAX_LIMIT)
) -> list[dict[str, Any]]:
    """State changes found by refreshes and polls that no event announced."""
    _require(request, WEBHOOK_EVENTS_VIEW)
    return [
        {
            "environment": missed.environment.name,
            "object_kind": missed.object_kind,
            "upstream_id": missed.upstream_id,
            "previous_state": missed.previous_state,
            "observed_state": missed.observed_state,
            "expected_event": missed.expected_event,
            "source": missed.source,
            "detected_at": missed.detected_at,
        }
        for missed in selectors.missed_list()[:limit]
    ]
