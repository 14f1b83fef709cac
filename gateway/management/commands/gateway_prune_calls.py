"""manage.py gateway_prune_calls: delete upstream call log rows past the retention."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from gateway.call_log import prune


class Command(BaseCommand):
    help = "Delete upstream call log rows older than GATEWAY_CALL_LOG_RETENTION_DAYS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=None, help="Override the retention.")

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = prune(days=options["days"])
        self.stdout.write(f"deleted {deleted} upstream call log rows")
