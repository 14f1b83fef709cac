"""A month of activity driven through the emulator over real HTTP: deposits, payouts with fees
that complete, one that fails and one returned, the emulator's clock moved days between them;
every event delivered to a receiver and applied as PayOps applies them. The month's statement
balances to the cent against the upstream's own balance (GET balance), its lines roll forward to
the closing balance, and the PDF and CSV say so."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import Group
from pypdf import PdfReader

from accounts.events import virtual_account_apply_event
from books.statements.pdf import statement_pdf_write
from books.statements.statement import statement_build
from books.statements.views import statement_csv
from gateway.client import call_sync, upstream
from gateway.models import Environment
from payouts.approval.services import payout_approve
from payouts.models import Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.tracking.events import payout_apply_event
from staff.models import StaffUser
from staff.roles import roles_sync
from tests.gateway.conftest import LiveEmulator, _fresh_shared_state, live_emulator, sandbox  # noqa: F401
from tests.identity import stepped_up
from tests.payouts.live import World, build_world, submitted_payout
from tests.servers import serve_in_thread

D = Decimal
S = PayoutStatus
DAY = 86400


class Collector:
    """A webhook receiver keeping every delivered body (signatures are the webhooks app's)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if scope["path"] == "/hook" and body:
            self.bodies.append(json.loads(body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


@pytest.fixture
def q_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def _person(email: str, role: str) -> StaffUser:
    user = StaffUser.objects.create_user(email, "pw-not-used-123", full_name=email.split("@")[0])
    user.groups.set(Group.objects.filter(name=role))
    return stepped_up(StaffUser.objects.get(pk=user.pk))


@pytest.fixture
def hooks(sandbox: Environment) -> Iterator[Collector]:  # noqa: F811
    collector = Collector()
    with serve_in_thread(collector, lifespan="off") as url:
        call_sync(
            upstream(sandbox).webhooks.register,
            webhook_url=f"{url}/hook",
            secret="test-webhook-secret",
            client_uuid=sandbox.client_id,
        )
        yield collector


def _paid(world: World, maker: StaffUser, approver: StaffUser, amount: str) -> Payout:
    payout = submitted_payout(world, maker=maker, amount=amount)
    payout_approve(payout=payout, by=approver)
    payout_otp_send(payout=payout, by=approver)
    payout = payout_otp_confirm(payout=payout, by=approver, code=world.otp_code())
    assert payout.status == S.CREATED
    return payout


def _deliver(world: World, hooks: Collector, applied: set[str]) -> None:
    """Progress the upstream, deliver every queued event, apply the new ones in order."""
    world.tick(times=4)
    world.emulator.control("POST", "webhooks/flush")
    for body in hooks.bodies:
        data = body["data"]
        event_id = str(data.get("event_id") or body.get("event_id") or id(body))
        if event_id in applied:
            continue
        applied.add(event_id)
        if body["event"] == "virtual_account.deposit_funds_received":
            virtual_account_apply_event(
                environment=world.environment, event_type=body["event"], data=data
            )
        elif body["event"].startswith("payout."):
            payout_apply_event(environment=world.environment, event_type=body["event"], data=data)


@pytest.mark.django_db(transaction=True)
def test_a_month_of_activity_balances_to_the_cent_with_the_upstream(
    live_emulator: LiveEmulator,  # noqa: F811
    sandbox: Environment,  # noqa: F811
    hooks: Collector,
    q_sync: None,
) -> None:
    roles_sync()
    maker = _person("maker@books.test", "finance_maker")
    approver = _person("approver@books.test", "finance_approver")
    auditor = _person("auditor@books.test", "auditor")
    first_day = datetime.now(UTC).date() - timedelta(days=1)
    world = build_world(live_emulator, sandbox, recipient_creator=maker, balance="5000.00")
    applied: set[str] = set()
    payouts: dict[str, Payout] = {}
    # A month: a step every three and a half days, each moving the balance.
    steps: list[tuple[str, str]] = [
        ("deposit", "1200.00"),
        ("payout", "100.00"),  # completes
        ("payout", "250.02"),  # in review, then completes
        ("deposit", "300.55"),
        ("payout", "100.03"),  # fails: the debit comes back
        ("payout", "100.04"),  # completes, then returned: the debit comes back
        ("deposit", "42.10"),
        ("payout", "75.00"),  # completes
    ]
    for kind, amount in steps:
        live_emulator.advance(3.5 * DAY)
        if kind == "deposit":
            live_emulator.control(
                "POST",
                "deposits",
                json={"virtual_account_id": world.account.upstream_id, "amount": amount},
            )
        else:
            payouts[amount] = _paid(world, maker, approver, amount)
        _deliver(world, hooks, applied)
    _deliver(world, hooks, applied)
    for amount, final in (
        ("100.00", S.COMPLETED),
        ("250.02", S.COMPLETED),
        ("100.03", S.FAILED),
        ("100.04", S.RETURNED),
        ("75.00", S.COMPLETED),
    ):
        payouts[amount].refresh_from_db()
        assert payouts[amount].status == final, amount
    last_day = datetime.fromisoformat(live_emulator.control("GET", "clock")["now"]).date()
    # The upstream's own balance, read directly (the truth the statement must meet).
    truth = call_sync(upstream(sandbox).virtual_accounts.balance, world.account.upstream_id)

    statement = statement_build(
        virtual_account=world.account,
        start=first_day,
        end=last_day + timedelta(days=1),
        by=auditor,
        refresh=True,
    )
    assert statement.opening == D("0.00")
    assert statement.deposits == D("6542.65")
    assert statement.payouts == D("625.09")
    failed, returned = payouts["100.03"], payouts["100.04"]
    assert statement.returns == (
        failed.charged_amount
        + failed.charged_total_fees  # type: ignore[operator]
        + returned.charged_amount
        + returned.charged_total_fees  # type: ignore[operator]
    )
    fees = sum((p.charged_total_fees for p in payouts.values()), D("0"))  # type: ignore[misc]
    assert statement.fees == fees > 0
    assert statement.closing == D(str(truth.available_balance))
    assert statement.check.reading == statement.closing
    assert statement.check.agrees, statement.check.words
    # Every line moves the running balance; the last one is the closing balance.
    assert len(statement.lines) == 3 + 1 + 5 + 2  # build_world's deposit, 3 more, 5 payouts, 2 back
    balance = statement.opening
    for line in statement.lines:
        balance += line.net
        assert line.balance == balance
    assert balance == statement.closing

    out = io.BytesIO()
    statement_pdf_write(statement, out)
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(out.getvalue())).pages)
    assert "Balances with the upstream" in text
    assert f"{statement.closing:,.2f} USD" in text
    rows = list(
        csv.reader(
            io.StringIO(b"".join(statement_csv(statement).streaming_content).decode())  # type: ignore[attr-defined]
        )
    )
    block = {row[0]: row[1] for row in rows if len(row) == 2}
    assert block["Closing balance"] == f"{statement.closing}"
    assert block["Upstream check"].startswith("Balances with the upstream")
