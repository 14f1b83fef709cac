"""Figures and moments per language (console/templatetags/ui.py): English keeps 1,234.56 and
ISO dates; Spanish and Brazilian Portuguese write 1.234,56 and 23/11/2026; money always keeps
its currency code."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.template import Context, Template
from django.utils import timezone, translation

from console.templatetags.ui import count, countdown_words, duration, money, percent, rate, when

MOMENT = datetime(2026, 11, 23, 17, 26, 5, tzinfo=UTC)
SHOWN = {
    "en": ("1,234,567.50 USD", "-1,000.00 COP", "12,345", "0.5 %", "5.123400", "1.2 s",
           "2026-11-23 17:26 UTC", "2026-11-23 17:26:05 UTC", "2026-11-23"),
    "es": ("1.234.567,50 USD", "-1.000,00 COP", "12.345", "0,5 %", "5,123400", "1,2 s",
           "23/11/2026 17:26 UTC", "23/11/2026 17:26:05 UTC", "23/11/2026"),
    "pt-br": ("1.234.567,50 USD", "-1.000,00 COP", "12.345", "0,5 %", "5,123400", "1,2 s",
              "23/11/2026 17:26 UTC", "23/11/2026 17:26:05 UTC", "23/11/2026"),
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(SHOWN))
def test_figures_and_moments_follow_the_language(language: str) -> None:
    with translation.override(language), timezone.override("UTC"):
        shown = (
            money(Decimal("1234567.5"), "usd"),
            money("-1000", "COP"),
            count(12345),
            percent(Decimal("0.005")),
            rate(Decimal("5.1234")),
            duration(1200),
            when(MOMENT),
            when(MOMENT, "seconds"),
            when(date(2026, 11, 23)),
        )
    assert shown == SHOWN[language]


def test_a_missing_figure_and_the_countdown_word_per_language() -> None:
    with translation.override("es"):
        assert money(None, "USD") == "—"
        assert countdown_words(0) == "vencido"
        assert countdown_words(65) == "1:05"
    with translation.override("pt-br"):
        assert countdown_words(0) == "expirado"
    with translation.override("en"):
        assert countdown_words(0) == "expired"


def test_the_money_component_writes_the_languages_separators() -> None:
    template = Template('{% include "includes/money.html" with amount=amount currency="BRL" %}')
    with translation.override("pt-br"):
        html = template.render(Context({"amount": Decimal("-9876.5")}))
    assert '<span class="money money-negative">-9.876,50 BRL</span>' in html
