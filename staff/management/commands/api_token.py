"""`manage.py api_token create --email EMAIL [--name NAME] --json`: a personal API token."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from staff.api_tokens import api_token_create
from staff.models import StaffUser


class Command(BaseCommand):
    help = "Create a personal API token for a staff member (the token is printed once)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a token")
        create.add_argument("--email", required=True)
        create.add_argument("--name", default="command line")
        create.add_argument("--json", action="store_true", help='print exactly {"token": "..."}')

    def handle(self, *args: Any, **options: Any) -> None:
        email = str(options["email"]).strip().lower()
        user = StaffUser.objects.filter(email=email).first()
        if user is None:
            raise CommandError(f"No staff user with email {email}.")
        try:
            new = api_token_create(user=user, name=options["name"])
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps({"token": new.plaintext}))
        else:
            self.stdout.write(f"API token for {user.email} (shown once): {new.plaintext}")
