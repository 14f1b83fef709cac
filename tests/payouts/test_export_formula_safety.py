"""The payouts CSV export neutralises spreadsheet formulas (issue 19's probe: =HYPERLINK)."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from gateway.services.environments import environment_switch
from tests.finance import (
    make_draft,
    make_end_user,
    make_environment,
    make_recipient,
    make_staff,
    make_virtual_account,
)

pytestmark = pytest.mark.django_db


def test_a_formula_in_a_reference_or_a_name_comes_out_inert() -> None:
    environment = make_environment()
    maker = make_staff("finance_maker")
    owner = make_end_user(environment)
    account = make_virtual_account(environment, owner)
    recipient = make_recipient(
        environment, owner, created_by=maker, first_name="@SUM(A1", last_name="A2)"
    )
    common = {
        "maker": maker,
        "environment": environment,
        "virtual_account": account,
        "recipient": recipient,
    }
    references = ['=HYPERLINK("http://x","y")', "+1+1", "-1+1", "@A1", "INV-7"]
    for n, reference in enumerate(references):
        make_draft(**common, amount=f"{10 + n}.00", reference=reference)
    environment_switch(user=maker, environment=environment)
    client = Client()
    client.force_login(maker)

    response = client.get("/payouts/export.csv")
    assert response["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert sorted(row["reference"] for row in rows) == sorted(
        ['\'=HYPERLINK("http://x","y")', "'+1+1", "'-1+1", "'@A1", "INV-7"]
    )
    assert {row["recipient"] for row in rows} == {"'@SUM(A1 A2)"}
    # Amounts (never negative in a payout) are written as they were.
    assert sorted(row["amount"] for row in rows) == ["10.00", "11.00", "12.00", "13.00", "14.00"]
