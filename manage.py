#!/usr/bin/env python
"""Django's command-line utility for PayOps (configuration and connection errors in one line)."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A missing setting deserves one clear sentence, not a traceback wall.
        settings_module = os.environ["DJANGO_SETTINGS_MODULE"]
        sys.stderr.write(f"PayOps cannot start ({settings_module}): {exc}\n")
        sys.exit(2)
    except OperationalError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        sys.stderr.write(
            f"PayOps cannot reach its database: {first_line}\n"
            "Check DATABASE_URL (unset means the embedded SQLite file in var/) and that the "
            "server is running.\n"
        )
        sys.exit(3)


if __name__ == "__main__":
    main()
