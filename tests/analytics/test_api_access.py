"""/api/v1/analytics/{figure} and /analytics/ per role: finance makers, approvers, the auditor
(and the admin, a superuser) read; compliance does not. The API's JSON is the page's figure."""

from __future__ import annotations

import csv
import io

import pytest

from tests.books.statement_fixtures import October, build_october
from tests.finance import make_environment

pytestmark = pytest.mark.django_db

READS = {
    "finance_maker": True,
    "finance_approver": True,
    "auditor": True,
    "admin": True,  # a superuser (staff.bootstrap)
    "compliance": False,
}
PERIOD = {"start": "2026-10-01", "end": "2026-10-31"}
FIGURES = ("volume", "outcomes", "completion", "fees", "balances", "budget")


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


@pytest.mark.parametrize("role", sorted(READS))
def test_every_figure_per_role(role: str, october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for(role)
    expected = 200 if READS[role] else 403
    assert client.get("/analytics/", PERIOD).status_code == expected
    for name in FIGURES:
        response = client.get(f"/api/v1/analytics/{name}", PERIOD)
        assert response.status_code == expected, (name, response.status_code)


def test_json_and_csv_of_a_figure(october: October, client_for) -> None:  # type: ignore[no-untyped-def]
    client = client_for("auditor")
    body = client.get("/api/v1/analytics/outcomes", PERIOD).json()
    assert (body["figure"], body["start"], body["end"]) == ("outcomes", "2026-10-01", "2026-10-31")
    assert body["environment"] == october.environment.name
    assert body["header"] == ["Outcome", "Payouts", "Share (%)"]
    assert body["rows"][:3] == [
        ["Completed", 2, "50.0"],
        ["Returned", 1, "25.0"],
        ["Failed", 1, "25.0"],
    ]
    assert body["chart"]["labels"][0] == "Completed"
    times = client.get("/api/v1/analytics/completion", PERIOD).json()
    assert times["rows"][-1] == ["Whole period", 3, "180.0", "1440.0"]
    response = client.get("/api/v1/analytics/fees", {**PERIOD, "format": "csv"})
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["Corridor", "Payouts", "Currency", "Total fees", "FX spread"]
    assert ["USD→MXN US WIRE", "1", "USD", "3.50", "0.80"] in rows
    assert client.get("/api/v1/analytics/nope", PERIOD).status_code == 404
    backwards = client.get("/api/v1/analytics/volume", {"start": "2026-10-31", "end": "2026-10-01"})
    assert backwards.status_code == 400
