"""The polling benchmark's world: a simulated clock, and open payouts seeded on both sides.

The payouts are written straight into the emulator's tables (its own database alias, the same
code base) and into PayOps's, as if they had been made and tracked for weeks: making 8,000
payouts through the API would take longer than the week it measures, and measure nothing else.
Only the polling against the running emulator is real.
"""

from __future__ import annotations

import random
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

MIN, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)

# 1,000 open payouts spread over states, as a steady flow of about 30 payouts a day leaves them
# (850 completed within the 30-day return window), plus payouts stuck for hours or days:
# (PayOps status, count, how long ago it reached that status: between these two).
OPEN_MIX: list[tuple[str, int, tuple[timedelta, timedelta]]] = [
    ("completed", 850, (10 * MIN, 29 * DAY + 12 * HOUR)),
    ("in_review", 60, (10 * MIN, 10 * DAY)),  # a person upstream decides: hours to days
    ("processing", 30, (MIN, 12 * HOUR)),
    ("pending", 20, (MIN, 6 * HOUR)),
    ("created", 25, (MIN, 12 * HOUR)),  # 10 of them crypto, waiting for their deposit
    ("kyt_pending", 15, (MIN, 6 * HOUR)),
]
# The 3,000 other payouts of the crowded run: final, in the listed window (the last 30 days).
OTHERS = 3_000
OTHERS_MIX = (("COMPLETED", 0.85), ("FAILED", 0.10), ("CANCELLED", 0.05))
RETURNS_IN_THE_WEEK = 10  # completed payouts the upstream returns during the week
MOVES_IN_THE_WEEK = 30  # payouts on their way that complete during the week


class SimClock:
    """
    `django.utils.timezone.now` and every model default that used it answer the simulated time
    (the call log's `created_at` too, so the polling's own pace reads simulated hours).
    """

    def __init__(self, start: datetime) -> None:
        self.now = start

    def install(self) -> None:
        from django.apps import apps
        from django.utils import timezone

        original = timezone.now
        timezone.now = lambda: self.now  # type: ignore[assignment]
        for model in apps.get_models():
            for model_field in model._meta.concrete_fields:
                if model_field.default is original:
                    model_field.default = timezone.now
                    model_field.__dict__.pop("_get_default", None)


@dataclass
class Seeded:
    environment: Any
    returns: dict[str, datetime] = field(default_factory=dict)  # upstream id -> when returned
    moves: dict[str, datetime] = field(default_factory=dict)  # upstream id -> when completed


def _plan_for(status: str, mode: str) -> list[str]:
    """The statuses the upstream walks for a payout now in `status` (sandbox plans)."""
    if status == "IN_REVIEW":
        return ["CREATED", "IN_REVIEW", "COMPLETED"]
    second = "KYT_PENDING" if mode == "crypto" else "PENDING"
    return ["CREATED", second, "PROCESSING", "COMPLETED"]


def emulator_payout(
    context: dict[str, Any], *, status: str, created: datetime, entered: datetime, mode: str
) -> Any:
    from emulator.domain.formats import iso
    from emulator.models import Payout as UpstreamPayout

    plan = _plan_for(status, mode)
    steps = plan[: plan.index(status) + 1] if status in plan else ["CREATED", status]
    events = [{"status": s, "at": iso(created if s == "CREATED" else entered)} for s in steps]
    return UpstreamPayout(
        payout_id=uuid.uuid4(),
        client=context["client"],
        environment="sandbox",
        virtual_account=context["account"],
        recipient=context["recipient"],
        mode=mode,
        status=status,
        plan=plan,
        amount=Decimal("100.00"),
        fees={"total_fees": "1.00"},
        total_fees=Decimal("1.00"),
        recipient_amount=Decimal("100.00"),
        payment_method="WIRE",
        payment_instructions={"network": "solana", "currency": "USDC"}
        if mode == "crypto"
        else None,
        events=events,
        created_at=created,
        updated_at=entered,
    )


def seed(context: dict[str, Any], *, start: datetime, crowded: bool, rng: random.Random) -> Seeded:
    """1,000 open payouts on both sides (and 3,000 others upstream when crowded)."""
    from emulator.models import Payout as UpstreamPayout
    from payouts.models import Payout

    seeded = Seeded(context["environment"])
    upstream_rows, ours = [], []
    for status, count, (young, old) in OPEN_MIX:
        for n in range(count):
            entered = start - young - (old - young) * rng.random()
            created = entered - (2 * DAY if status == "completed" else 10 * MIN) * rng.random()
            mode = (
                "crypto" if status == "kyt_pending" or (status == "created" and n < 10) else "fiat"
            )
            row = emulator_payout(
                context, status=status.upper(), created=created, entered=entered, mode=mode
            )
            upstream_rows.append(row)
            ours.append(_ours(context, row, status=status, entered=entered, created=created))
    _changes_in_the_week(upstream_rows, seeded, start=start, rng=rng)
    if crowded:
        for _ in range(OTHERS):
            created = start - 30 * DAY * rng.random()
            status = rng.choices([s for s, _ in OTHERS_MIX], [w for _, w in OTHERS_MIX])[0]
            upstream_rows.append(
                emulator_payout(
                    context, status=status, created=created, entered=created + HOUR, mode="fiat"
                )
            )
    UpstreamPayout.objects.bulk_create(upstream_rows, batch_size=500)
    Payout.objects.bulk_create(ours, batch_size=500)
    return seeded


def _ours(
    context: dict[str, Any], row: Any, *, status: str, entered: datetime, created: datetime
) -> Any:
    from payouts.models import Payout

    return Payout(
        environment=context["environment"],
        maker=context["maker"],
        virtual_account=context["mirror_account"],
        recipient=context["mirror_recipient"],
        amount=row.amount,
        mode=row.mode,
        payment_currency="USDC" if row.mode == "crypto" else "",
        payment_network="solana" if row.mode == "crypto" else "",
        reference=f"BENCH-{secrets.token_hex(4)}",
        upstream_id=str(row.payout_id),
        upstream_status=row.status,
        status=status,
        created_at=created - HOUR,
        submitted_at=created - HOUR,
        submitting_since=created - 10 * timedelta(seconds=1),
        last_submit_at=created - 10 * timedelta(seconds=1),
        updated_at=entered,
    )


def _changes_in_the_week(
    rows: list[Any], seeded: Seeded, *, start: datetime, rng: random.Random
) -> None:
    """Some returns and completions happen upstream during the week, with no webhook."""
    # Returned within the 30 days a completed payout is watched (later ones are not watched).
    completed = [r for r in rows if r.status == "COMPLETED" and r.updated_at > start - 23 * DAY]
    for row in rng.sample(completed, RETURNS_IN_THE_WEEK):
        row.plan = [*row.plan[: row.plan.index("COMPLETED") + 1], "FAILED"]
        row.next_step_at = start + 6 * DAY * rng.random()
        seeded.returns[str(row.payout_id)] = row.next_step_at
    moving = [r for r in rows if r.status in ("PENDING", "PROCESSING", "IN_REVIEW")]
    for row in rng.sample(moving, MOVES_IN_THE_WEEK):
        row.next_step_at = start + 2 * DAY * rng.random()
        seeded.moves[str(row.payout_id)] = row.next_step_at


def upstream_world(
    url: str, control: Callable[..., Any], *, name: str, maker: Any
) -> dict[str, Any]:
    """An environment on its own emulator client, with a user, an account and a recipient."""
    from django.utils import timezone

    from accounts.models import Recipient, VirtualAccount
    from emulator.models import ApiClient
    from emulator.models import Recipient as UpstreamRecipient
    from emulator.models import VirtualAccount as UpstreamAccount
    from gateway.client import call_sync, upstream
    from gateway.models import Environment
    from users.models import EndUser

    credentials = control("POST", "clients", json={"name": name})
    env = Environment(name=name, kind="sandbox", base_url=url, weekly_budget=10_000)
    env.set_credentials(**credentials)
    env.verified_at = timezone.now()
    env.save()
    client = upstream(env)
    email = f"payee-{secrets.token_hex(4)}@example.com"
    user = call_sync(
        client.users.create,
        idempotency_key=str(uuid.uuid4()),
        email=email,
        phone_number="+15125550100",
        first_name="Ada",
        last_name="Lovelace",
        country="US",
    )
    account = call_sync(client.virtual_accounts.create, user_id=user.user_id, mode="fiat")
    recipient = call_sync(
        client.recipients.create,
        user_id=user.user_id,
        first_name="Grace",
        last_name="Hopper",
        email="grace@example.com",
        address={"street_name": "1 Main St", "city": "Austin", "country": "US"},
        account={
            "account_type": "WIRE",
            "account_number": "123456789012",
            "routing_number": "021000021",
            "bank_name": "Chase",
        },
    )
    end_user = EndUser.objects.create(
        environment=env,
        upstream_id=user.user_id,
        email=email,
        first_name="Ada",
        last_name="Lovelace",
        country="US",
        status="verified",
        verification_status="verified",
    )
    return {
        "environment": env,
        "maker": maker,
        "client": ApiClient.objects.get(client_id=credentials["client_id"]),
        "account": UpstreamAccount.objects.get(pk=account.id),
        "recipient": UpstreamRecipient.objects.get(pk=recipient.recipient_id),
        "mirror_account": VirtualAccount.objects.create(
            environment=env, end_user=end_user, upstream_id=account.id, mode="fiat"
        ),
        "mirror_recipient": Recipient.objects.create(
            status="approved",  # dual control: a payable recipient
            environment=env,
            end_user=end_user,
            upstream_id=recipient.recipient_id,
            kind="individual",
            first_name="Grace",
            last_name="Hopper",
            street_name="1 Main St",
            city="Austin",
            country="US",
            account_type="WIRE",
            account_number="123456789012",
            routing_number="021000021",
            created_by=maker,
        ),
    }
