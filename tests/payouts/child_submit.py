"""A worker process that dies right after the upstream accepted the payout, before recording it.

Run as `python -m tests.payouts.child_submit <payout_id>`: the upstream call happens for real
(over HTTP, with the payout's key); then the process exits hard, as a killed worker would,
before the answer is committed.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    from tests.gateway.child_caller import setup

    setup()
    from payouts.release import initiation

    def die_after_the_call(**kwargs: object) -> None:
        sys.stdout.write("called upstream, dying before the commit\n")
        sys.stdout.flush()
        os._exit(137)

    initiation.initiation_recorded = die_after_the_call  # type: ignore[assignment]
    initiation.initiation_send(payout_id=int(sys.argv[1]))
    sys.exit(0)  # not reached when the call succeeded


if __name__ == "__main__":
    main()
