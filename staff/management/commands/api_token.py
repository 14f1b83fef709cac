"""`manage.py api_token create --email EMAIL [--name NAME] [--scopes read,prepare] [--days 30]
[--break-glass] --json`: a personal API token.

Privileged scopes (approve, admin) are the operator's break-glass path: someone with shell access
to the server already holds more than any token, so the command may create one without the
person's step-up, but only with `--break-glass`, for 90 days at most, and audited as such.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from staff.api_tokens import DEFAULT_DAYS, DEFAULT_SCOPES, api_token_create, is_privileged
from staff.errors import ServiceError
from staff.models import StaffUser


class Command(BaseCommand):
    help = "Create a personal API token for a staff member (the token is printed once)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a token")
        create.add_argument("--email", required=True)
        create.add_argument("--name", default="command line")
        create.add_argument(
            "--scopes",
            default=None,
            help=(
                "comma-separated: read, prepare, approve, admin, within the person's roles "
                f"(default {','.join(DEFAULT_SCOPES)}, less those beyond their roles)"
            ),
        )
        create.add_argument("--days", type=int, default=DEFAULT_DAYS, help="lifetime in days")
        create.add_argument(
            "--break-glass",
            action="store_true",
            help="required for approve or admin: created without the person's step-up (audited)",
        )
        create.add_argument("--json", action="store_true", help='print exactly {"token": "..."}')

    def handle(self, *args: Any, **options: Any) -> None:
        email = str(options["email"]).strip().lower()
        user = StaffUser.objects.filter(email=email).first()
        if user is None:
            raise CommandError(f"No staff user with email {email}.")
        scopes = (
            None
            if options["scopes"] is None
            else [scope.strip() for scope in str(options["scopes"]).split(",") if scope.strip()]
        )
        if scopes is not None and is_privileged(scopes) and not options["break_glass"]:
            raise CommandError(
                "approve and admin tokens are made on the profile page after step-up; from the "
                "command line only with --break-glass (audited, 90 days at most)."
            )
        try:
            new = api_token_create(
                user=user, name=options["name"], scopes=scopes, days=options["days"]
            )
        except ServiceError as exc:
            raise CommandError(exc.as_message()) from exc
        except PermissionDenied as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps({"token": new.plaintext}))
        else:
            self.stdout.write(
                f"API token for {user.email} (shown once; scopes {', '.join(new.token.scopes)}; "
                f"expires {new.token.expires_at:%Y-%m-%d %H:%M} UTC): {new.plaintext}"
            )
