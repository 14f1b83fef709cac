"""`manage.py payops_bootstrap`: run every registered bootstrap step (see console.bootstrap)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from console.bootstrap import BOOTSTRAP_STEPS
from staff.bootstrap import DemoSeedingRefused


class Command(BaseCommand):
    help = "Sync staff roles, seed demo staff where allowed, and run the apps' bootstrap steps."

    def handle(self, *args: Any, **options: Any) -> None:
        for step in BOOTSTRAP_STEPS:
            try:
                outcome = step.run()
            except DemoSeedingRefused as refused:
                raise CommandError(str(refused)) from refused
            self.stdout.write(f"[{step.name}] {outcome}")
        self.stdout.write(self.style.SUCCESS("Bootstrap complete."))
