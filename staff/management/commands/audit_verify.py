"""`manage.py audit_verify`: walk the audit trail's hash chain and name the first broken link.

Exit status 0 when the chain holds, 1 when it is broken (for a cron job or a healthcheck)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from staff.audit_chain import chain_verify


class Command(BaseCommand):
    help = "Verify the audit trail's hash chain; name the first broken link (exit 1 if any)."

    def handle(self, *args: Any, **options: Any) -> None:
        report = chain_verify()
        if report.ok:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Audit chain intact: {report.checked} entries, "
                    f"head seq {report.head_seq} hash {report.head_hash}"
                )
            )
            return
        raise CommandError(
            f"Audit chain BROKEN at {report.broken} ({report.checked} entries verified before it).",
            returncode=1,
        )
