"""Break-glass: clear a person's second factor from the server when no admin can sign in.

    manage.py second_factor_reset someone@example.com --reason "lost phone, ticket 123"

Audited (actor: the system, `break_glass: true`); the person's sessions end and they enrol again
at their next sign-in. With an admin able to sign in, use the page (two admins) instead.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from staff.models import StaffUser
from staff.second_factor.reset import second_factor_reset_break_glass


class Command(BaseCommand):
    help = "Clear a staff member's second factor (break-glass; audited). They enrol again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")
        parser.add_argument("--reason", required=True, help="Why (kept in the audit trail).")

    def handle(self, *args: Any, **options: Any) -> None:
        user = StaffUser.objects.filter(email=str(options["email"]).strip().lower()).first()
        if user is None:
            raise CommandError(f"No staff user with email {options['email']!r}.")
        reason = str(options["reason"]).strip()
        if not reason:
            raise CommandError("Give a reason (--reason): it goes into the audit trail.")
        second_factor_reset_break_glass(target=user, reason=reason)
        self.stdout.write(
            f"Second factor of {user.email} cleared; their sessions ended. They enrol again at "
            "their next sign-in."
        )
