"""console.exports: the one CSV writer, neutralising spreadsheet formulas (issue 19, OWASP)."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest

from console.exports import csv_cell, csv_lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("-5.00", "'-5.00"),  # a leading minus in text is neutralised too (see the docstring)
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("INV-2026-001", "INV-2026-001"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_text_that_a_spreadsheet_would_run_is_made_inert(text: str, written: str) -> None:
    assert csv_cell(text) == written


def test_numbers_passed_as_numbers_stay_numbers() -> None:
    assert csv_cell(Decimal("-12.50")) == Decimal("-12.50")
    assert csv_cell(-3) == -3
    assert csv_cell(None) == ""


def test_lines_are_valid_csv_and_every_cell_goes_through_the_helper() -> None:
    text = "".join(csv_lines(["=h", "b"], [['=HYPERLINK("http://x","y")', "x,\n@y"], [1, None]]))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["'=h", "b"], ['\'=HYPERLINK("http://x","y")', "x,\n@y"], ["1", ""]]


def test_every_csv_export_uses_the_one_helper() -> None:
    """No app writes CSV itself: a new export that did would skip the neutralising."""
    apps = [p for p in ROOT.iterdir() if (p / "apps.py").exists()]
    offenders = [
        str(path.relative_to(ROOT))
        for app in apps
        for path in app.rglob("*.py")
        if path != ROOT / "console" / "exports.py"
        and re.search(r"\bcsv\.(writer|DictWriter)\b|text/csv", path.read_text())
    ]
    assert offenders == []
