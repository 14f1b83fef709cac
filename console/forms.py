"""Form fields shared by every page: ISO dates whatever the browser, fields for one choice.

`<input type="date">` is drawn in the browser's locale (mm/dd/yyyy in en-US) while every date the
back office shows is ISO (`2026-11-23`), and its look differs from browser to browser. These fields
are plain text inputs that read and show ISO only: a pattern and a placeholder guide the person,
the server validates (the filter bar's form is `novalidate`), and a bad value gets a clear error
on its own field (docs/ui.md, "Filter bar").
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

ISO_DATE = "%Y-%m-%d"
ISO_DATE_PATTERN = r"\d{4}-\d{2}-\d{2}"
ISO_DATETIME_PATTERN = r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?"


class IsoDateInput(forms.DateInput):
    """A text input showing a date as yyyy-mm-dd (never in the browser's locale)."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        defaults = {
            "pattern": ISO_DATE_PATTERN,
            # The pattern's letters in the reader's language (es, pt-BR: aaaa-mm-dd).
            "placeholder": gettext_lazy("yyyy-mm-dd"),
            "inputmode": "numeric",
            "autocomplete": "off",
            "size": "10",
            "maxlength": "10",
        }
        super().__init__(attrs={**defaults, **(attrs or {})}, format=ISO_DATE)


class IsoDateTimeInput(forms.DateTimeInput):
    """A text input showing a moment as yyyy-mm-dd hh:mm."""

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        defaults = {
            "pattern": ISO_DATETIME_PATTERN,
            "placeholder": gettext_lazy("yyyy-mm-dd hh:mm"),
            "autocomplete": "off",
            "size": "16",
            "maxlength": "19",
        }
        super().__init__(attrs={**defaults, **(attrs or {})}, format=f"{ISO_DATE} %H:%M")


class IsoDateField(forms.DateField):
    """A date typed as yyyy-mm-dd only (not 11/23/2026, which reads two ways)."""

    widget = IsoDateInput
    input_formats = [ISO_DATE]
    default_error_messages = {
        "invalid": gettext_lazy("Enter the date as yyyy-mm-dd (ISO 8601), for example 2026-11-23.")
    }


class IsoDateTimeField(forms.DateTimeField):
    """A moment typed as yyyy-mm-dd hh:mm (a `T` or seconds are accepted; a date alone is 00:00)."""

    widget = IsoDateTimeInput
    input_formats = [
        f"{ISO_DATE} %H:%M",
        f"{ISO_DATE}T%H:%M",
        f"{ISO_DATE} %H:%M:%S",
        f"{ISO_DATE}T%H:%M:%S",
        ISO_DATE,
    ]
    default_error_messages = {
        "invalid": gettext_lazy(
            "Enter the moment as yyyy-mm-dd hh:mm (ISO 8601), for example 2026-11-23 17:26."
        )
    }


def show_when(field: forms.Field, control: str, *values: str) -> None:
    """Mark `field` as belonging to some choices of the form's field `control` only: the field
    include renders `data-show-when`, and static/js/show_when.js hides it for other choices.
    Presentation only: the server still validates as it did (docs/ui.md)."""
    field.show_when = f"{control}={','.join(values)}"  # type: ignore[attr-defined]
