"""/api/v1/books/...: statements (JSON, CSV, PDF), balance as of a day, the daily balance history,
a completed payout's receipt (PDF), the fees and FX report (JSON, CSV). The same builders as
the pages; books.view_books for every operation (`@needs`)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils import timezone
from ninja import Field, Query, Router, Schema

from accounts.models import VirtualAccount
from accounts.selectors import virtual_account_get
from books.statements import fees, history, receipts, statement
from books.statements.forms import period_checked
from books.statements.views import pdf_response, receipt_pdf, statement_csv, statement_pdf
from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES, ErrorOut
from console.exports import CSV_MEDIA_TYPE, csv_response
from gateway.api_support import EnvironmentName, acting_staff, api_environment
from payouts.api_support import payout_found
from staff import roles

router = Router(tags=["books"])

Start = Query(None, description="First day (UTC); default: this month's first.")
End = Query(None, description="Last day, included (UTC); default: today.")
StatementFormat = Query("json", description="json, csv or pdf.")
FeesFormat = Query("json", description="json or csv.")
On = Query(None, description="The day (UTC): the balance at its end; today when omitted.")
Corridor = Query("", description="One corridor, as listed in `corridors`.")

Format = Literal["json", "csv", "pdf"]
# Integer keys: merged into the 200 that `response=` declares (a "200" string would be a second,
# duplicated key in the OpenAPI document, which Swagger UI refuses to render).
STATEMENT_RESPONSES = {
    200: {
        "description": "JSON by default; `format=csv` a streamed, formula-safe CSV; "
        "`format=pdf` the statement as a PDF.",
        "content": {"application/json": {}, CSV_MEDIA_TYPE: {}, "application/pdf": {}},
    }
}
CSV_RESPONSES = {
    200: {
        "description": "JSON by default; `format=csv` a streamed, formula-safe CSV.",
        "content": {"application/json": {}, CSV_MEDIA_TYPE: {}},
    }
}


def _account(request: HttpRequest, account_id: int, environment: str | None) -> VirtualAccount:
    return virtual_account_get(environment=api_environment(request, environment), pk=account_id)


class LineOut(Schema):
    at: datetime
    kind: str
    description: str
    reference: str
    money_out: Decimal
    fees: Decimal
    money_in: Decimal
    balance: Decimal
    rate: Decimal | None
    recipient_amount: Decimal | None
    recipient_currency: str
    payout_id: int | None


class UpstreamCheckOut(Schema):
    agrees: bool
    upstream_balance: Decimal | None = Field(description="The upstream's reading, if one applies.")
    read_at: datetime | None
    difference: Decimal | None = Field(description="closing minus the upstream's reading.")
    words: str


class StatementOut(Schema):
    virtual_account_id: int
    holder: str
    account_number_last4: str
    currency: str
    start: date
    end: date
    opening: Decimal
    deposits: Decimal
    payouts: Decimal
    fees: Decimal
    returns: Decimal
    adjustments: Decimal
    closing: Decimal
    upstream_check: UpstreamCheckOut
    lines: list[LineOut]


def statement_out(built: statement.Statement) -> StatementOut:
    check = built.check
    return StatementOut(
        virtual_account_id=built.account.pk,
        holder=built.holder,
        account_number_last4=built.account.account_number[-4:],
        currency=built.currency,
        start=built.start,
        end=built.end,
        opening=built.opening,
        deposits=built.deposits,
        payouts=built.payouts,
        fees=built.fees,
        returns=built.returns,
        adjustments=built.adjustments,
        closing=built.closing,
        upstream_check=UpstreamCheckOut(
            agrees=check.agrees,
            upstream_balance=check.reading,
            read_at=check.read_at,
            difference=check.difference,
            words=check.words,
        ),
        lines=[
            LineOut(
                at=line.at,
                kind=line.kind.value,
                description=line.description,
                reference=line.reference,
                money_out=line.money_out,
                fees=line.fees,
                money_in=line.money_in,
                balance=line.balance,
                rate=line.rate,
                recipient_amount=line.recipient_amount,
                recipient_currency=line.recipient_currency,
                payout_id=line.payout_id,
            )
            for line in built.lines
        ],
    )


@router.get(
    "/accounts/{account_id}/statement",
    response={200: StatementOut, **ERROR_RESPONSES},
    openapi_extra={"responses": STATEMENT_RESPONSES},
)
@needs(roles.BOOKS_VIEW)
def get_statement(
    request: HttpRequest,
    account_id: int,
    start: date | None = Start,
    end: date | None = End,
    format: Format = StatementFormat,
    environment: str | None = EnvironmentName,
) -> StatementOut | HttpResponseBase:
    """The account's statement for the days start..end, checked against the upstream's balance
    (a period that has not ended is checked against a fresh reading)."""
    va = _account(request, account_id, environment)
    first, last = period_checked(start, end)
    built = statement.statement_build(
        virtual_account=va, start=first, end=last, by=acting_staff(request), refresh=True
    )
    if format == "csv":
        return statement_csv(built)
    if format == "pdf":
        return pdf_response(statement_pdf(built), f"{built.filename_stem}.pdf")
    return statement_out(built)


class BalanceOut(Schema):
    virtual_account_id: int
    on: date
    balance: Decimal
    currency: str


@router.get("/accounts/{account_id}/balance", response={200: BalanceOut, **ERROR_RESPONSES})
@needs(roles.BOOKS_VIEW)
def get_balance(
    request: HttpRequest,
    account_id: int,
    on: date | None = On,
    environment: str | None = EnvironmentName,
) -> BalanceOut:
    """PayOps's balance of the account at the end of a day (the ledger)."""
    va = _account(request, account_id, environment)
    on = on or timezone.now().date()
    balance = history.balance_on(virtual_account=va, day=on, by=acting_staff(request))
    return BalanceOut(virtual_account_id=va.pk, on=on, balance=balance, currency=va.currency)


class ReadingOut(Schema):
    as_of: datetime
    read_at: datetime
    upstream_balance: Decimal
    ledger_balance: Decimal
    difference: Decimal


class DayOut(Schema):
    day: date
    balance: Decimal
    readings: list[ReadingOut]


class HistoryOut(Schema):
    virtual_account_id: int
    currency: str
    days: list[DayOut]


@router.get("/accounts/{account_id}/balance-history", response={200: HistoryOut, **ERROR_RESPONSES})
@needs(roles.BOOKS_VIEW)
def get_balance_history(
    request: HttpRequest,
    account_id: int,
    start: date | None = Start,
    end: date | None = End,
    environment: str | None = EnvironmentName,
) -> HistoryOut:
    """The balance at each day's end, with the upstream's readings of that day beside the
    ledger's balance at each reading."""
    va = _account(request, account_id, environment)
    first, last = period_checked(start, end)
    days = history.balance_history(
        virtual_account=va, start=first, end=last, by=acting_staff(request)
    )
    return HistoryOut(
        virtual_account_id=va.pk,
        currency=va.currency,
        days=[
            DayOut(
                day=day.day,
                balance=day.balance,
                readings=[
                    ReadingOut(
                        as_of=r.as_of,
                        read_at=r.read_at,
                        upstream_balance=r.balance,
                        ledger_balance=r.ledger,
                        difference=r.difference,
                    )
                    for r in day.readings
                ],
            )
            for day in days
        ],
    )


@router.get(
    "/payouts/{payout_id}/receipt",
    response={409: ErrorOut, **ERROR_RESPONSES},
    openapi_extra={
        "responses": {
            "200": {
                "description": "The receipt of a completed payout, as a PDF.",
                "content": {"application/pdf": {}},
            }
        }
    },
)
@needs(roles.BOOKS_VIEW)
def get_receipt(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> HttpResponseBase:
    """A completed payout's receipt (409 `not_completed` for any other status)."""
    payout = payout_found(request, payout_id, environment)
    receipt = receipts.receipt_build(payout=payout, by=acting_staff(request))
    return pdf_response(receipt_pdf(receipt), receipt.filename)


class CorridorOut(Schema):
    corridor: str
    currency: str
    recipient_currency: str
    payouts: int
    amount: Decimal
    fixed: Decimal
    percentage: Decimal
    network: Decimal
    unitemised: Decimal
    total_fees: Decimal
    fx_markup: Decimal = Field(description="In the payouts' currency.")
    penalty: Decimal
    spread: Decimal
    recipient_amount: Decimal
    fx_markup_recipient: Decimal = Field(description="In the recipient's currency.")
    penalty_recipient: Decimal
    spread_recipient: Decimal


class FeesReportOut(Schema):
    start: date
    end: date
    environment: str | None
    corridors: list[str]
    rows: list[CorridorOut]


@router.get(
    "/fees",
    response={200: FeesReportOut, **ERROR_RESPONSES},
    openapi_extra={"responses": CSV_RESPONSES},
)
@needs(roles.BOOKS_VIEW)
def get_fees_report(
    request: HttpRequest,
    start: date | None = Start,
    end: date | None = End,
    corridor: str = Corridor,
    format: Literal["json", "csv"] = FeesFormat,
    environment: str | None = EnvironmentName,
) -> FeesReportOut | HttpResponseBase:
    """Fees and FX spread per corridor (docs/books.md "Fees and FX" says how each is derived)."""
    first, last = period_checked(start, end)
    env = api_environment(request, environment)
    report = fees.fees_report(
        environment=env, start=first, end=last, corridor=corridor, by=acting_staff(request)
    )
    if format == "csv":
        return csv_response(
            fees.FEES_CSV_HEADER,
            fees.fees_csv_rows(report),
            filename=f"fees-fx-{first:%Y%m%d}-{last:%Y%m%d}.csv",
        )
    return FeesReportOut(
        start=first,
        end=last,
        environment=env.name if env else None,
        corridors=report.corridors,
        rows=[
            CorridorOut(
                corridor=row.corridor,
                currency=row.currency,
                recipient_currency=row.recipient_currency,
                payouts=row.payouts,
                amount=row.amount,
                fixed=row.fixed,
                percentage=row.percentage,
                network=row.network,
                unitemised=row.unitemised,
                total_fees=row.total_fees,
                fx_markup=row.fx_markup_usd,
                penalty=row.penalty_usd,
                spread=row.spread_usd,
                recipient_amount=row.recipient_amount,
                fx_markup_recipient=row.fx_markup_recipient,
                penalty_recipient=row.penalty_recipient,
                spread_recipient=row.spread_recipient,
            )
            for row in report.rows
        ],
    )
