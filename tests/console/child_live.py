"""Another process (as the worker is) sending live updates through the outbox.

    python -m tests.console.child_live commit <kind>          broadcast in a committed transaction
    python -m tests.console.child_live rollback <kind>        broadcast in one that rolls back
    python -m tests.console.child_live hold <kind>            broadcast, print "written", wait for
                                                              a line on stdin, then commit
    python -m tests.console.child_live payout <pk> <status>   move a payout, as polling would

Run with tests.gateway.conftest.child_environment() so it uses the test's database.
"""

from __future__ import annotations

import os
import sys


class RolledBack(Exception):
    pass


def main() -> None:
    from tests.gateway.child_caller import setup

    setup()
    from django.db import transaction

    from console.broadcast import broadcast_event_on_commit

    action, *args = sys.argv[1:]
    if action == "commit":
        with transaction.atomic():
            broadcast_event_on_commit(args[0], {"pid": os.getpid()})
    elif action == "rollback":
        try:
            with transaction.atomic():
                broadcast_event_on_commit(args[0], {"pid": os.getpid()})
                raise RolledBack
        except RolledBack:
            pass
    elif action == "hold":
        with transaction.atomic():
            broadcast_event_on_commit(args[0], {"pid": os.getpid()})
            sys.stdout.write("written\n")
            sys.stdout.flush()
            sys.stdin.readline()
    elif action == "payout":
        from payouts.models import ChangeSource
        from payouts.states import payout_locked, payout_transition

        with transaction.atomic():
            payout_transition(payout_locked(int(args[0])), args[1], source=ChangeSource.POLL)
    else:
        raise SystemExit(f"unknown action {action!r}")


if __name__ == "__main__":
    main()
