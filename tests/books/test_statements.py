"""A statement from the ledger: its summary, lines and running balance, the upstream check (agrees,
differs, cannot be made), CSV formula-safety, the PDF's text, balance as of a day and the daily
history beside the upstream's readings, constant queries."""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pypdf import PdfReader

from accounts.models import BalanceSnapshot, Deposit
from books.statements.history import balance_history, balance_on
from books.statements.pdf import statement_pdf_write
from books.statements.statement import statement_build, statement_csv_rows
from books.statements.views import statement_csv
from gateway.models import Environment
from tests.books.statement_fixtures import October, at, build_october
from tests.finance import make_environment

pytestmark = pytest.mark.django_db

D = Decimal
OCT_1, OCT_31 = date(2026, 10, 1), date(2026, 10, 31)


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def october(environment: Environment) -> October:
    return build_october(environment)


def _reading(october: October, balance: str, read_at, as_of=None) -> BalanceSnapshot:  # type: ignore[no-untyped-def]
    snapshot = BalanceSnapshot.objects.create(
        virtual_account=october.account,
        balance=D(balance),
        currency="USD",
        as_of=as_of or read_at,
        source="refresh",
    )
    BalanceSnapshot.objects.filter(pk=snapshot.pk).update(read_at=read_at)
    return snapshot


def test_summary_and_lines_with_running_balance(october: October) -> None:
    statement = statement_build(virtual_account=october.account, start=OCT_1, end=OCT_31, by=None)
    assert (statement.opening, statement.deposits, statement.payouts) == (
        D("500.00"),
        D("1025.00"),
        D("650.04"),
    )
    assert (statement.fees, statement.returns, statement.adjustments, statement.closing) == (
        D("14.50"),
        D("256.04"),
        D("-1.25"),
        D("1115.25"),
    )
    lines = [
        (line.kind.value, line.money_out, line.fees, line.money_in, line.balance)
        for line in statement.lines
    ]
    assert lines == [
        ("deposit", D("0"), D("0"), D("1000.00"), D("1500.00")),
        ("payout", D("100.00"), D("3.50"), D("0"), D("1396.50")),
        ("payout", D("200.04"), D("4.00"), D("0"), D("1192.46")),
        ("reversal", D("0"), D("0"), D("204.04"), D("1396.50")),
        ("payout", D("50.00"), D("2.00"), D("0"), D("1344.50")),
        ("reversal", D("0"), D("0"), D("52.00"), D("1396.50")),
        ("adjustment", D("1.25"), D("0"), D("0"), D("1395.25")),
        ("deposit", D("0"), D("0"), D("25.00"), D("1420.25")),
        ("payout", D("300.00"), D("5.00"), D("0"), D("1115.25")),
    ]
    assert statement.lines[-1].balance == statement.closing
    first_payout = statement.lines[1]
    assert (first_payout.rate, first_payout.recipient_amount, first_payout.recipient_currency) == (
        D("19.840000"),
        D("1984.00"),
        "MXN",
    )
    assert first_payout.reference == "po-1"


def test_consecutive_statements_chain(october: October) -> None:
    first = statement_build(
        virtual_account=october.account, start=OCT_1, end=date(2026, 10, 4), by=None
    )
    rest = statement_build(
        virtual_account=october.account, start=date(2026, 10, 5), end=OCT_31, by=None
    )
    assert first.closing == rest.opening == D("1192.46")
    assert rest.closing == D("1115.25")


def test_upstream_check_agrees_differs_or_says_why_not(october: October) -> None:
    def check():  # type: ignore[no-untyped-def]
        return statement_build(
            virtual_account=october.account, start=OCT_1, end=OCT_31, by=None
        ).check

    none = check()
    assert none.reading is None and "no reading" in none.words
    _reading(october, "1115.25", at(11, 1, 0, 5), as_of=at(10, 9))
    agrees = check()
    assert agrees.agrees and agrees.words.startswith("Balances with the upstream")
    BalanceSnapshot.objects.all().delete()
    _reading(october, "1115.00", at(11, 1, 0, 5), as_of=at(10, 9))
    differs = check()
    assert differs.difference == D("0.25") and not differs.agrees
    assert "Differs from the upstream by 0.25" in differs.words
    BalanceSnapshot.objects.all().delete()
    _reading(october, "1104.25", at(11, 4))  # changed in November: proves nothing of October
    later = check()
    assert later.reading is None and "changed after the period ended" in later.words


def test_csv_header_block_lines_and_formula_safety(october: October) -> None:
    statement = statement_build(virtual_account=october.account, start=OCT_1, end=OCT_31, by=None)
    response = statement_csv(statement)
    text = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    rows = list(csv.reader(io.StringIO(text)))
    block = {row[0]: row[1] for row in rows[:13]}
    assert block["Account number"] == "•••• 6789"
    assert block["Period (UTC)"] == "2026-10-01 to 2026-10-31"
    assert (block["Opening balance"], block["Closing balance"]) == ("500.00", "1115.25")
    header = rows.index(
        [
            "Date (UTC)",
            "Type",
            "Description",
            "Reference",
            "Money out",
            "Fees",
            "Money in",
            "Balance",
            "Rate",
            "Recipient amount",
            "Recipient currency",
        ]
    )
    lines = rows[header + 1 :]
    assert len(lines) == 9
    hostile = next(row for row in lines if row[3] == "dep-2")
    # Mid-cell it is text: no spreadsheet runs a formula that does not start the cell.
    assert hostile[2] == 'Deposit from =HYPERLINK("http://evil.test","x")'
    assert not any(cell.startswith(("=", "+", "@")) for row in rows for cell in row)
    assert lines[-1][7] == "1115.25"
    assert next(iter(statement_csv_rows(statement)))[0] == "Account holder"


def test_a_description_that_is_a_formula_is_made_inert(october: October) -> None:
    Deposit.objects.create(
        virtual_account=october.account,
        deposit_id="=cmd|' /C calc'!A0",
        amount=D("1.00"),
        currency="USD",
        received_at=at(10, 10),
    )
    statement = statement_build(virtual_account=october.account, start=OCT_1, end=OCT_31, by=None)
    text = b"".join(statement_csv(statement).streaming_content).decode()  # type: ignore[attr-defined]
    assert "'=cmd|" in text
    assert not any(cell.startswith("=") for row in csv.reader(io.StringIO(text)) for cell in row)


def test_pdf_reads_like_a_statement(october: October) -> None:
    _reading(october, "1115.25", at(11, 1, 0, 5), as_of=at(10, 9))
    statement = statement_build(virtual_account=october.account, start=OCT_1, end=OCT_31, by=None)
    out = io.BytesIO()
    statement_pdf_write(statement, out)
    reader = PdfReader(io.BytesIO(out.getvalue()))
    text = "\n".join(page.extract_text() for page in reader.pages)
    pages = len(reader.pages)
    for expected in (
        "Account statement",
        "Ana Silva",
        "6789",
        "021000021",
        "01 Oct 2026 to 31 Oct 2026",
        "Opening balance",
        "500.00 USD",
        "Closing balance",
        "1,115.25 USD",
        "Deposit from Acme Corp",
        "po-1",
        "Recipient gets 1,984.00 MXN",
        "19.840000",
        "Wire fee charged by the bank",
        "Balances with the upstream",
        f"Page 1 of {pages}",
    ):
        assert expected in text, expected
    assert "9876543216789" not in text  # the account number is masked


def test_balance_as_of_a_day_and_daily_history(october: October) -> None:
    assert balance_on(virtual_account=october.account, day=date(2026, 9, 30), by=None) == D(
        "500.00"
    )
    assert balance_on(virtual_account=october.account, day=date(2026, 10, 3), by=None) == D(
        "1192.46"
    )
    _reading(october, "1396.50", at(10, 5, 18), as_of=at(10, 5, 12))
    _reading(october, "1390.00", at(10, 7, 18), as_of=at(10, 7, 12))  # off by 5.25
    days = balance_history(
        virtual_account=october.account, start=date(2026, 10, 1), end=date(2026, 10, 10), by=None
    )
    assert [d.balance for d in days] == [
        D("1500.00"),
        D("1396.50"),
        D("1192.46"),
        D("1192.46"),
        D("1396.50"),
        D("1396.50"),
        D("1395.25"),
        D("1420.25"),
        D("1115.25"),
        D("1115.25"),
    ]
    (on_5th,) = days[4].readings
    assert (on_5th.ledger, on_5th.difference) == (D("1396.50"), D("0.00"))
    (on_7th,) = days[6].readings
    assert (on_7th.ledger, on_7th.difference) == (D("1395.25"), D("5.25"))


def _queries(fn) -> int:  # type: ignore[no-untyped-def]
    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured)


def test_constant_queries_whatever_the_number_of_movements(october: October) -> None:
    va = october.account

    def statement() -> None:
        statement_build(virtual_account=va, start=OCT_1, end=OCT_31, by=None)

    def history() -> None:
        balance_history(virtual_account=va, start=OCT_1, end=OCT_31, by=None)

    before = (_queries(statement), _queries(history))
    for n in range(40):
        Deposit.objects.create(
            virtual_account=va,
            deposit_id=f"more-{n}",
            amount=D("1.00"),
            currency="USD",
            received_at=at(10, 1 + n % 28, 9),
        )
    assert (_queries(statement), _queries(history)) == before


def test_a_long_statement_flows_over_numbered_pages(october: October) -> None:
    for n in range(70):
        Deposit.objects.create(
            virtual_account=october.account,
            deposit_id=f"bulk-{n}",
            amount=D("12345.67"),
            currency="USD",
            received_at=at(10, 10 + n % 20, 9, n % 60),
            sender_name="A very long sender name Incorporated International Holdings Ltd",
        )
    statement = statement_build(virtual_account=october.account, start=OCT_1, end=OCT_31, by=None)
    out = io.BytesIO()
    statement_pdf_write(statement, out)
    pages = [page.extract_text() for page in PdfReader(io.BytesIO(out.getvalue())).pages]
    assert len(pages) > 2
    assert "dep-1" in pages[0] and "Transactions" in pages[0]  # the lines start on page 1
    for number, text in enumerate(pages, start=1):
        assert f"Page {number} of {len(pages)}" in text
        assert "Paid out" in text  # the table's header on every page
    everything = "\n".join(pages)
    assert all(f"bulk-{n}\n" in everything or f"bulk-{n} " in everything for n in range(70))
    assert "Closing balance 865,312.15 USD" in everything.replace("\n", " ")
