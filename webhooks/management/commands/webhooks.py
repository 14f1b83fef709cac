"""Operator commands: register, rotate, show (secrets, operators only), reprocess, prune."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from gateway.environment_names import environment_by_short_name
from gateway.models import Environment
from staff.errors import ServiceError
from webhooks.models import EventStatus, WebhookEndpoint, WebhookEvent
from webhooks.services import (
    endpoint_url,
    webhook_deliveries_prune,
    webhook_endpoint_register,
    webhook_event_process,
    webhook_secret_rotate,
    webhook_secrets_reveal,
)

ENVIRONMENT_HELP = (
    "Environment: its name, slug, or a unique word or prefix of it, any case (e.g. sandbox)."
)


class Command(BaseCommand):
    help = "Webhook endpoints and events: register | rotate | show | reprocess | prune."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        for name in ("register", "rotate", "show"):
            p = sub.add_parser(name)
            p.add_argument("--environment", required=True, help=ENVIRONMENT_HELP)
            p.add_argument("--json", action="store_true", help="Machine-readable output.")
            p.add_argument(
                "--base-url",
                default="",
                help="Overrides WEBHOOKS_PUBLIC_BASE_URL (show: the URL last registered).",
            )
        p = sub.add_parser("reprocess", help="Re-run one event, a filtered set, or all failed.")
        p.add_argument("--event-id", help="One event (its evt_ id).")
        p.add_argument("--environment", help="Only this environment's events. " + ENVIRONMENT_HELP)
        p.add_argument("--type", dest="event_type", help="Only this event type.")
        p.add_argument("--status", choices=[s.value for s in EventStatus], help="Only this status.")
        p.add_argument("--failed", action="store_true", help="All failed and handler-less events.")
        p = sub.add_parser("prune", help="Delete raw deliveries past the retention; events stay.")
        p.add_argument("--days", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action in ("register", "rotate", "show"):
            self._endpoint(action, options)
        elif action == "reprocess":
            self._reprocess(options)
        else:
            deleted = webhook_deliveries_prune(days=options["days"])
            self.stdout.write(f"Pruned {deleted} deliveries.")

    def _environment(self, name: str) -> Environment:
        try:
            return environment_by_short_name(name)
        except ServiceError as exc:
            raise CommandError(exc.message) from exc

    def _endpoint(self, action: str, options: dict[str, Any]) -> None:
        environment = self._environment(options["environment"])
        base_url = options["base_url"]
        try:
            if action == "show":
                endpoint = WebhookEndpoint.objects.filter(environment=environment).first()
                if endpoint is None or not endpoint.secret_encrypted:
                    raise CommandError(f"{environment.name} has no webhook endpoint registered.")
                if options["json"]:
                    revealed = webhook_secrets_reveal(endpoint=endpoint, base_url=base_url)
                    self.stdout.write(json.dumps(revealed))
                else:
                    url = endpoint_url(endpoint, base_url=base_url)
                    set_at = f"{endpoint.secret_set_at:%Y-%m-%d %H:%M:%S} UTC"
                    self.stdout.write(f"{environment.name}: {url} (secret set {set_at})")
                return
            service = webhook_secret_rotate if action == "rotate" else webhook_endpoint_register
            result = service(environment=environment, by=None, base_url=base_url)
        except ServiceError as exc:
            raise CommandError(exc.as_message()) from exc
        if options["json"]:
            self.stdout.write(json.dumps({"url": result.url, "rotated": result.rotated}))
        else:
            verb = "Rotated the secret of" if result.rotated else "Registered"
            self.stdout.write(f"{verb} {environment.name}: {result.url}")

    def _reprocess(self, options: dict[str, Any]) -> None:
        events = WebhookEvent.objects.exclude(status=EventStatus.UNHANDLED)
        if options["event_id"]:
            events = events.filter(event_id=options["event_id"])
        if options["environment"]:
            events = events.filter(environment=self._environment(options["environment"]))
        if options["event_type"]:
            events = events.filter(event_type=options["event_type"])
        if options["status"]:
            events = events.filter(status=options["status"])
        if options["failed"]:
            events = events.filter(status__in=[EventStatus.FAILED, EventStatus.NO_HANDLER])
        pks = list(events.order_by("received_at").values_list("pk", flat=True))
        if not pks:
            self.stdout.write("No event matches.")
            return
        still_failing = 0
        for number, pk in enumerate(pks, start=1):
            status = webhook_event_process(event_pk=pk, trigger="reprocess")
            still_failing += status in (EventStatus.FAILED, EventStatus.NO_HANDLER)
            self.stdout.write(f"[{number}/{len(pks)}] event pk={pk}: {status}")
        self.stdout.write(f"Reprocessed {len(pks)} events; {still_failing} still failing.")
