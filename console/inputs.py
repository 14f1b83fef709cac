"""
Strict input, one rule each for the API schemas and the page forms alike.

- **Amounts** are ASCII digits with at most one dot (an optional leading minus, so that the
  domain's own "must be positive" message still speaks): Arabic-Indic or fullwidth digits,
  padded `" 10 "`, `"1e3"`, `"NaN"` are refused with one message. Python's `Decimal()` and Django's
  `DecimalField` take all of them as numbers, so a person's typo or a script's encoding slip
  would become money. JSON numbers are taken as they are (they are ASCII by definition).
- **Text** carries no NUL or other C0 control character (nor DEL); multi-line text (notes,
  reasons, memos) may carry tab, line feed and carriage return. PostgreSQL refuses NUL in text
  and the upstream has no use for the others; a refusal on the field beats a 500 later.

API: `Amount` and `Text` / `MultilineText` (pydantic `Annotated` types) in schemas. Pages:
`AmountField` and `TextField(multiline=...)` in forms. Both call `amount_problem` /
`text_problem`, so the two doors say the same thing.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

AMOUNT_MESSAGE = gettext_lazy("Use ASCII digits 0-9 and a dot, no spaces (for example 1250.50).")
TEXT_MESSAGE = gettext_lazy(
    "Remove control characters (such as NUL); they cannot be stored or sent."
)
LINE_MESSAGE = gettext_lazy(
    "Use one line, without control characters (such as NUL, tab or line breaks)."
)

_AMOUNT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def amount_problem(value: str) -> str | None:
    """Why a typed amount is refused (None: it is plain ASCII digits with an optional dot)."""
    return None if _AMOUNT.fullmatch(value) else str(AMOUNT_MESSAGE)


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """Why a text is refused (None: no control character, bar tab and line breaks when
    `multiline`)."""
    if multiline:
        return str(TEXT_MESSAGE) if _CONTROL_BUT_LINES.search(value) else None
    return str(LINE_MESSAGE) if _CONTROL.search(value) else None


# --- API (pydantic) ----------------------------------------------------------------------------


def _strict_amount(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("amount_ascii", str(AMOUNT_MESSAGE))
    if isinstance(value, str) and amount_problem(value):
        raise PydanticCustomError("amount_ascii", str(AMOUNT_MESSAGE))
    return value


def _strict_text(multiline: bool) -> Any:
    def check(value: Any) -> Any:
        if isinstance(value, str):
            problem = text_problem(value, multiline=multiline)
            if problem:
                raise PydanticCustomError("text_control_characters", problem)
        return value

    return check


Amount = Annotated[Decimal, BeforeValidator(_strict_amount)]
Text = Annotated[str, BeforeValidator(_strict_text(False))]
MultilineText = Annotated[str, BeforeValidator(_strict_text(True))]


# --- Pages (Django forms) ----------------------------------------------------------------------


class AmountField(forms.DecimalField):
    """A DecimalField that takes only what `Amount` takes."""

    def to_python(self, value: Any) -> Decimal | None:  # type: ignore[override]
        if isinstance(value, str) and value not in self.empty_values:
            problem = amount_problem(value)
            if problem:
                raise ValidationError(problem, code="amount_ascii")
        return super().to_python(value)


class TextField(forms.CharField):
    """A CharField refusing control characters (tab and line breaks allowed when `multiline`).
    It keeps CharField's stripping of surrounding spaces: a page's text is not money."""

    def __init__(self, *args: Any, multiline: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.multiline = multiline

    def validate(self, value: Any) -> None:
        super().validate(value)
        if isinstance(value, str):
            problem = text_problem(value, multiline=self.multiline)
            if problem:
                raise ValidationError(problem, code="control_characters")
