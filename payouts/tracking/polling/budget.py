"""How many upstream calls a polling pass may make: its own pace, within the background share."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Budget:
    """What the week and the last hours have spent (from the call log), and the shares."""

    weekly_budget: int
    background_share: float
    polling_share: float  # of the weekly budget, for polling alone
    spent_last_hour: int  # polling's own calls
    spent_last_day: int
    background_this_week: int  # every background call this ISO week, polling's included
    week_left: timedelta
    max_per_pass: int = 10


def allowance(budget: Budget) -> int:
    """
    Calls this pass may make. Polling keeps to its own pace (`polling_share` of the week: at most
    twice its hourly rate in any hour, its daily rate in any 24 hours) and never runs faster than
    what is left of the background share spread over the rest of the week: when other background
    work has eaten the share, polling slows down instead of stopping for the rest of the week.
    """
    hourly = budget.weekly_budget * budget.polling_share / (7 * 24)
    left = budget.weekly_budget * budget.background_share - budget.background_this_week
    hours_left = max(budget.week_left / HOUR, 1.0)
    rooms = (
        2 * hourly - budget.spent_last_hour,
        24 * hourly - budget.spent_last_day,
        min(left, 24 * left / hours_left - budget.spent_last_day),
        float(budget.max_per_pass),
    )
    return max(0, math.floor(min(rooms)))
