"""manage.py emulator_client create --name X [--json]: issues emulator API credentials once."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from emulator.clients import client_create


class Command(BaseCommand):
    help = "Manage the upstream emulator's API clients (the credentials are shown once)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("action", choices=["create"])
        parser.add_argument("--name", required=True)
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--rate-per-second", type=int, default=None)
        parser.add_argument("--max-concurrent", type=int, default=None)
        parser.add_argument("--weekly-quota", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        name = str(options["name"]).strip()
        if not name:
            raise CommandError("--name must not be empty")
        issued = client_create(
            name=name,
            rate_per_second=options["rate_per_second"],
            max_concurrent=options["max_concurrent"],
            weekly_quota=options["weekly_quota"],
        )
        credentials = issued.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(credentials))
            return
        for key, value in credentials.items():
            self.stdout.write(f"{key}: {value}")
        self.stdout.write("Keep the password and API key now: they are stored hashed.")
