"""Another process (as the worker is) sending live updates through the outbox.

    python -m tests.console.child_live commit <kind>          broadcast in a committed transaction
    python -m tests.console.child_live rollback <kind>        broadcast in one that rolls back
    python -m tests.console.child_live hold <kind>            broadcast, print "written", wait for
                                                              a line on stdin, then commit
    python -m tests.console.child_live payout <pk> <status>   move a payout, as polling would
    python -m tests.console.child_live activate <va pk>       apply virtual_account.activated
    python -m tests.console.child_live verify <end user pk>   apply user.verification.accepted
    python -m tests.console.child_live rename <end user pk>   apply user.updated: a new first name
    python -m tests.console.child_live run-step <run pk>      one step of a reconciliation run
    python -m tests.console.child_live initiated <pk> <id>    record the upstream's 201 for a payout
    python -m tests.console.child_live event <pk> <STATUS>    apply a payout.* event to that payout

Run with `environment()`: the test's database, and no Redis (the outbox layer carries it).
"""

from __future__ import annotations

import os
import sys


class RolledBack(Exception):
    pass


def environment() -> dict[str, str]:
    """The child's environment: this test run's database, the embedded default's layer."""
    from tests.gateway.conftest import child_environment

    return {**child_environment(), "REDIS_URL": ""}


def _apply_event(action: str, pk: int) -> None:
    """The webhook processing task's work, as the worker does it (event data as the upstream's)."""
    from django.utils import timezone

    from accounts.events import virtual_account_apply_event
    from accounts.models import VirtualAccount
    from users.events import end_user_apply_event
    from users.models import EndUser

    event_id = f"evt_{action}_{pk}_{os.getpid()}"
    if action == "activate":
        va = VirtualAccount.objects.select_related("end_user").get(pk=pk)
        data = {
            "event_id": event_id,
            "virtual_account_id": va.upstream_id,
            "user_id": va.end_user.upstream_id,
            "status": "active",
            "account_number": "123456789012",
            "routing_number": "021000021",
        }
        virtual_account_apply_event(
            environment=va.environment, event_type="virtual_account.activated", data=data
        )
        return
    end_user = EndUser.objects.get(pk=pk)
    if action == "rename":
        changes = {"first_name": "Renamed", "updated_at": timezone.now().isoformat()}
        end_user_apply_event(
            environment=end_user.environment,
            event_type="user.updated",
            data={
                "event_id": event_id,
                "user_id": end_user.upstream_id,
                **changes,
                "updated_fields": {"first_name": "Renamed"},
            },
        )
        return
    data = {
        "event_id": event_id,
        "user_id": end_user.upstream_id,
        "id": f"ver_{pk}",
        "verification_status": "verified",
        "kyc_type": "full",
    }
    end_user_apply_event(
        environment=end_user.environment, event_type="user.verification.accepted", data=data
    )


def _payout_upstream(action: str, pk: int, value: str) -> None:
    """The worker's work on a payout: the initiation's answer recorded, or an event applied."""
    from gateway.schemas.payouts import PayoutCreated
    from payouts.models import Payout
    from payouts.release.initiation import initiation_recorded
    from payouts.tracking.events import payout_apply_event

    payout = Payout.objects.get(pk=pk)
    if action == "initiated":
        answer = {"id": value, "status": "CREATED", "amount": str(payout.amount), "currency": "USD"}
        initiation_recorded(payout_id=pk, created=PayoutCreated.model_validate(answer))
        return
    data = {"event_id": f"evt_{pk}_{value}_{os.getpid()}", "payout_id": payout.upstream_id}
    payout_apply_event(
        environment=payout.environment,
        event_type=f"payout.{value.lower()}",
        data={**data, "status": value},
    )


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
    elif action == "run-step":
        from books.reconciliation.engine import run_step

        run_step(run_id=int(args[0]))
    elif action in ("initiated", "event"):
        _payout_upstream(action, int(args[0]), args[1])
    elif action in ("activate", "verify", "rename"):
        _apply_event(action, int(args[0]))
    else:
        raise SystemExit(f"unknown action {action!r}")


if __name__ == "__main__":
    main()
