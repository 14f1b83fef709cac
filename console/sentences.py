"""A stored sentence as a message and its parameters, so each reader reads it in their language.

One mechanism for every sentence the product writes down for people to read later: an alert's
summary (alerts) and a payout notification (payouts.approval.notifications) both keep one.

An alert condition answers each subject with
`summary(gettext_noop("…%(environment)s…"), environment=…)`: the English msgid (marked with
`gettext_noop` so `makemessages` finds it, translated only when read) and its parameters. The
alert keeps both (`Alert.summary_message`, JSON) beside the English text
(`Alert.summary`, the record: audit, logs, search). `Alert.summary_text()` renders it in the
active language: the history page, the dashboard, the API's `summary_display`, each recipient's
email and the webhook (settings.LANGUAGE_CODE).

A parameter that is itself a word to translate (a payout's status) is a `Label`: stored as its
key in a label set, translated when read, never stored translated. The app that owns the words
registers the set from its AppConfig.ready(): `register_label_set("payout_status", PayoutStatus)`.
An amount is an `Amount` (exact decimal text and currency), written the reader's way when read
(`1.234,56 USD` in es and pt-BR), as the `money` filter writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import models
from django.utils import translation
from django.utils.translation import gettext

from console.templatetags.ui import money

# The label sets a summary's parameter may name: the set's name (stored) -> its choices.
LABEL_SETS: dict[str, type[models.TextChoices]] = {}


def register_label_set(name: str, choices: type[models.TextChoices]) -> None:
    """Let stored sentences name `choices` as `name` (from the owning app's ready())."""
    LABEL_SETS[name] = choices


@dataclass(frozen=True)
class Label:
    """A parameter translated when read: `value` is a key of the label set `of`."""

    of: str
    value: str
    lower: bool = False  # in the middle of a sentence: "Payout 42 is failed"

    def render(self) -> str:
        choices = LABEL_SETS.get(self.of)
        if choices is None or self.value not in choices.values:
            return self.value
        text = str(choices(self.value).label)
        return text.lower() if self.lower else text

    def as_json(self) -> dict[str, Any]:
        return {"label": self.of, "value": self.value, "lower": self.lower}


@dataclass(frozen=True)
class Amount:
    """A parameter that is money: the exact decimal as text, and its currency."""

    value: str
    currency: str

    def render(self) -> str:
        try:
            return money(Decimal(self.value), self.currency)
        except InvalidOperation:
            return f"{self.value} {self.currency}"

    def as_json(self) -> dict[str, Any]:
        return {"amount": self.value, "currency": self.currency}


def amount(value: Decimal, currency: str) -> Amount:
    return Amount(value=f"{value:f}", currency=currency)


Param = int | str | Label | Amount


@dataclass(frozen=True)
class Summary:
    """One alert's summary: an English msgid with named placeholders, and their values."""

    msgid: str
    params: Mapping[str, Param] = field(default_factory=dict)
    # The English record when it says more than the msgid (details only its page translates).
    record: str = ""

    def _values(self) -> dict[str, int | str]:
        return {
            name: value.render() if isinstance(value, Label | Amount) else value
            for name, value in self.params.items()
        }

    def english(self) -> str:
        """The record: the msgid filled in, its labels in English (no catalog active)."""
        if self.record:
            return self.record
        with translation.override(None):
            return self.msgid % self._values()

    def render(self, *, fallback: str) -> str:
        """In the active language; `fallback` (the stored English text) when the active
        language has no translation of the msgid (an old or unknown message) or it does not
        fit its parameters."""
        translated = gettext(self.msgid)
        if translated == self.msgid:
            return fallback
        try:
            return translated % self._values()
        except (KeyError, TypeError, ValueError):
            return fallback

    def as_json(self) -> dict[str, Any]:
        return {
            "msgid": self.msgid,
            "params": {
                name: value.as_json() if isinstance(value, Label | Amount) else value
                for name, value in self.params.items()
            },
        }

    @classmethod
    def from_json(cls, data: object) -> Summary | None:
        """The stored message, or None for an old row (null) or a shape this code cannot read."""
        if not isinstance(data, dict) or not isinstance(data.get("msgid"), str):
            return None
        params: dict[str, Param] = {}
        for name, value in (data.get("params") or {}).items():
            if isinstance(value, dict) and "amount" in value:
                params[name] = Amount(
                    value=str(value["amount"]), currency=str(value.get("currency", ""))
                )
            elif isinstance(value, dict):
                params[name] = Label(
                    of=str(value.get("label", "")),
                    value=str(value.get("value", "")),
                    lower=bool(value.get("lower", False)),
                )
            elif isinstance(value, int | str) and not isinstance(value, bool):
                params[name] = value
            else:
                return None
        return cls(msgid=data["msgid"], params=params)


def summary(msgid: str, **params: Param) -> Summary:
    """A condition's summary of one subject: `summary(gettext_noop("…"), id=42)`."""
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, int | str | Label | Amount):
            raise TypeError(
                f"summary parameter {name!r} must be an int, a str, a Label or an Amount"
            )
    return Summary(msgid=msgid, params=params)
