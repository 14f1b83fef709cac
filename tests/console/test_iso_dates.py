"""Date filters read and show ISO 8601 (yyyy-mm-dd) in every browser, like every other date."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django import forms
from django.test import Client

from console.forms import IsoDateField, IsoDateTimeField
from gateway.services.environments import environment_switch
from tests.finance import make_environment

ROOT = Path(__file__).resolve().parents[2]
GUESTS = {"emulator", "tests"}


class Filters(forms.Form):
    since = IsoDateField(required=False)
    at = IsoDateTimeField(required=False)


def test_a_date_is_a_text_input_shown_as_iso_whatever_the_locale() -> None:
    html = str(Filters(initial={"since": "2026-11-23"})["since"])
    assert 'type="text"' in html and 'type="date"' not in html
    assert 'value="2026-11-23"' in html
    assert 'placeholder="yyyy-mm-dd"' in html and r'pattern="\d{4}-\d{2}-\d{2}"' in html


def test_a_us_style_date_is_refused_on_its_field_with_the_format_to_use() -> None:
    form = Filters({"since": "11/23/2026", "at": "11/23/2026 10:00"})
    assert not form.is_valid()
    assert form.errors["since"] == [
        "Enter the date as yyyy-mm-dd (ISO 8601), for example 2026-11-23."
    ]
    assert "yyyy-mm-dd hh:mm" in form.errors["at"][0]


def test_a_moment_accepts_a_space_or_a_t_and_shows_a_space() -> None:
    for typed in ("2026-11-23 17:26", "2026-11-23T17:26", "2026-11-23"):
        form = Filters({"at": typed})
        assert form.is_valid(), form.errors
    html = str(Filters({"at": "2026-11-23T17:26"})["at"])
    assert 'value="2026-11-23T17:26"' in html  # a bound value is shown as typed
    shown = str(Filters(initial={"at": datetime(2026, 11, 23, 17, 26, tzinfo=UTC)})["at"])
    assert 'value="2026-11-23 17:26"' in shown


def _form_classes() -> Iterator[type[forms.BaseForm]]:
    for forms_module in sorted(ROOT.glob("*/forms.py")):
        if forms_module.parent.name not in GUESTS:
            importlib.import_module(f"{forms_module.parent.name}.forms")
    pending: list[type[forms.BaseForm]] = [forms.Form]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] not in {"django", "tests", *GUESTS}:
            yield cls


def test_every_form_of_the_back_office_takes_dates_as_iso() -> None:
    locale_dates = [
        f"{cls.__module__}.{cls.__name__}.{name}"
        for cls in _form_classes()
        for name, field in cls.base_fields.items()
        if getattr(field.widget, "input_type", "") in ("date", "datetime-local")
        or (isinstance(field, forms.DateField) and not isinstance(field, IsoDateField))
        or (isinstance(field, forms.DateTimeField) and not isinstance(field, IsoDateTimeField))
    ]
    assert locale_dates == []
    assert any(
        isinstance(field, IsoDateField)
        for cls in _form_classes()
        for field in cls.base_fields.values()
    )


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/quotes/", "date_from"),
        ("/payouts/", "date_from"),
        ("/end-users/", "created_from"),
        ("/gateway/calls/", "date"),
    ],
)
def test_each_list_shows_its_date_filter_as_iso_and_a_bad_one_on_its_field(
    client_for: Callable[[str], Client], demo_staff: dict[str, Any], path: str, name: str
) -> None:
    environment_switch(user=demo_staff["admin"], environment=make_environment())
    client = client_for("admin")
    html = client.get(path, {name: "2026-11-23"}).content.decode()
    field = html.split(f'data-field="{name}"')[1].split("</div>")[0]
    assert 'type="text"' in field and 'value="2026-11-23"' in field
    bad = client.get(path, {name: "11/23/2026"}).content.decode()
    field = bad.split(f'data-field="{name}"')[1].split("</div>")[0]
    assert "Enter the date as yyyy-mm-dd" in field
