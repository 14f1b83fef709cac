"""Strict input, one rule per kind for the API's schemas and the pages' forms (console.inputs)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django import forms
from ninja import Schema
from pydantic import ValidationError

from console.inputs import (
    AMOUNT_MESSAGE,
    Amount,
    AmountField,
    MultilineText,
    Text,
    TextField,
)

REFUSED_AMOUNTS = [
    "\u0661\u0660",  # Arabic-Indic ten
    "\u06f1\u06f0",  # Extended Arabic-Indic (Persian) ten
    "\uff11\uff10",  # fullwidth ten
    "\u0967\u0966",  # Devanagari ten
    " 10 ",
    "10 ",
    "\t10",
    "1 000",
    "1,000.00",
    "1e3",
    "NaN",
    "Infinity",
    "10.",
    ".5",
    "+10",
]
TAKEN_AMOUNTS = ["10", "10.5", "0.01", "1250.50", "-3"]


class AmountIn(Schema):
    amount: Amount


class TextIn(Schema):
    line: Text = ""
    note: MultilineText = ""


class AmountForm(forms.Form):
    amount = AmountField(max_digits=10, decimal_places=2)


class TextForm(forms.Form):
    line = TextField(required=False)
    note = TextField(required=False, multiline=True, widget=forms.Textarea)


@pytest.mark.parametrize("typed", REFUSED_AMOUNTS)
def test_an_amount_in_other_digits_or_padded_is_refused_by_the_api_and_the_form(
    typed: str,
) -> None:
    with pytest.raises(ValidationError) as raised:
        AmountIn(amount=typed)
    (error,) = raised.value.errors()
    assert error["loc"] == ("amount",) and error["msg"] == AMOUNT_MESSAGE

    form = AmountForm({"amount": typed})
    assert not form.is_valid()
    assert form.errors["amount"] == [AMOUNT_MESSAGE]


@pytest.mark.parametrize("typed", TAKEN_AMOUNTS)
def test_plain_ascii_amounts_are_taken_by_both(typed: str) -> None:
    assert AmountIn(amount=typed).amount == Decimal(typed)
    form = AmountForm({"amount": typed})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["amount"] == Decimal(typed)


def test_json_numbers_are_amounts_but_booleans_are_not() -> None:
    assert AmountIn.model_validate({"amount": 10}).amount == Decimal(10)
    assert AmountIn.model_validate({"amount": 10.5}).amount == Decimal("10.5")
    with pytest.raises(ValidationError):
        AmountIn.model_validate({"amount": True})


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x08", "\x1b", "\x7f", "\x0b", "\x0c"])
def test_control_characters_are_refused_in_any_text(char: str) -> None:
    for field in ("line", "note"):
        with pytest.raises(ValidationError) as raised:
            TextIn.model_validate({field: f"rent{char}march"})
        assert raised.value.errors()[0]["loc"] == (field,)
        form = TextForm({field: f"rent{char}march"})
        assert not form.is_valid()
        assert list(form.errors) == [field]


def test_tabs_and_line_breaks_only_in_multi_line_text() -> None:
    text = "first line\r\n\tsecond line"
    assert TextIn(note=text).note == text
    with pytest.raises(ValidationError):
        TextIn(line=text)
    assert TextForm({"note": text}).is_valid()
    assert not TextForm({"line": "a\tb"}).is_valid()


def test_ordinary_text_in_any_script_is_taken() -> None:
    text = "Pago de renta \u2014 Garc\u00eda \u0645\u0631\u062d\u0628\u0627 \u4f60\u597d"
    assert TextIn(line=text).line == text
    assert TextForm({"line": text}).is_valid()
