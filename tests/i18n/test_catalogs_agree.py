"""One message, one translation: a msgid (with its context and plural) translated in two catalogs
says the same in both, per language.

Django merges the catalogs at run time (`LOCALE_PATHS` first, root `locale/` then `config/locale/`,
then the apps in INSTALLED_APPS order) and the first that knows a message wins: a word translated
two ways shows one app's choice on another app's page (an alert's state once read "Resueltas",
the reconciliation's plural). Where one English word needs two translations (a gender, a verb and
a noun, "To" a recipient and "To" a date), the call sites give it a context (ADR 0026).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext, pgettext

from tests.i18n.catalogs import Message, parse_po, read_po

ROOT = Path(settings.BASE_DIR)
LANGUAGES = ("es", "pt_BR")
# Every folder Django reads a catalog from: LOCALE_PATHS (config is no app) and each app's.
LOCALE_DIRS = [
    *(Path(path) for path in settings.LOCALE_PATHS),
    *sorted(path for path in ROOT.glob("*/locale") if (path.parent / "apps.py").exists()),
]

Key = tuple[str | None, str, str]


def disagreements(catalogs: dict[str, list[Message]]) -> list[str]:
    """Each message translated differently in two of these catalogs (named by their folder), one
    line each: the message, then every catalog's translation."""
    seen: dict[Key, dict[str, tuple[str, ...]]] = defaultdict(dict)
    for name, messages in catalogs.items():
        for message in messages:
            if not message.msgid or "fuzzy" in message.flags:
                continue
            key = (message.msgctxt, message.msgid, message.msgid_plural)
            seen[key][name] = tuple(text for _index, text in sorted(message.msgstr.items()))
    found = []
    for (context, msgid, plural), translations in sorted(
        seen.items(), key=lambda item: (item[0][1], item[0][0] or "", item[0][2])
    ):
        if len(set(translations.values())) > 1:
            said = "; ".join(f"{name}: {' | '.join(text)}" for name, text in translations.items())
            where = f" (context {context!r})" if context is not None else ""
            plural_part = f" / {plural!r}" if plural else ""
            found.append(f"{msgid!r}{plural_part}{where} → {said}")
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_message_translated_in_two_catalogs_says_the_same(language: str) -> None:
    catalogs = {
        str(folder.relative_to(ROOT)): read_po(folder / language / "LC_MESSAGES" / "django.po")
        for folder in LOCALE_DIRS
    }
    assert len(catalogs) > 10 and "locale" in catalogs and "config/locale" in catalogs
    found = disagreements(catalogs)
    assert found == [], (
        f"{len(found)} messages translated two ways in {language} (choose one word for every "
        "catalog, or give the call sites a context when the meanings differ):\n" + "\n".join(found)
    )


def test_the_check_tells_two_translations_of_one_message_apart() -> None:
    def catalog(*entries: str) -> list[Message]:
        return parse_po('msgid ""\nmsgstr ""\n\n' + "\n\n".join(entries) + "\n")

    root = catalog(
        'msgid "To"\nmsgstr "Para"',
        'msgctxt "date range"\nmsgid "To"\nmsgstr "Hasta"',
        'msgid "Amount"\nmsgstr "Importe"',
        'msgid "%(n)s payout"\nmsgid_plural "%(n)s payouts"\nmsgstr[0] "%(n)s pago"\n'
        'msgstr[1] "%(n)s pagos"',
    )
    app = catalog(
        'msgctxt "date range"\nmsgid "To"\nmsgstr "Hasta"',
        'msgid "Amount"\nmsgstr "Monto"',
        'msgid "%(n)s payout"\nmsgid_plural "%(n)s payouts"\nmsgstr[0] "%(n)s pago"\n'
        'msgstr[1] "%(n)s pagamentos"',
    )
    # The context makes "To" two messages; "Amount" and the plural's second form disagree.
    assert disagreements({"locale": root, "payouts/locale": app}) == [
        "'%(n)s payout' / '%(n)s payouts' → locale: %(n)s pago | %(n)s pagos; "
        "payouts/locale: %(n)s pago | %(n)s pagamentos",
        "'Amount' → locale: Importe; payouts/locale: Monto",
    ]
    assert disagreements({"locale": root, "quotes/locale": root}) == []


# A word with two meanings, as the merged catalogs say it at run time: (context, msgid) → es, pt-br.
TWO_MEANINGS = [
    ((None, "To"), "Para", "Para"),  # a payout's recipient
    (("date range", "To"), "Hasta", "Até"),
    (("date range", "From"), "Desde", "De"),
    ((None, "Active"), "Activo", "Ativo"),  # an environment, a token
    (("quote state", "Active"), "Activa", "Ativa"),
    (("account state", "Active"), "Activa", "Ativa"),
    (("verb", "Change"), "Cambiar", "Trocar"),  # the environment badge's link
    ((None, "Change"), "Cambio", "Alteração"),  # an admin change, a missed event's change
    (("alert state", "Resolved"), "Resuelta", "Resolvido"),
    (("count of exceptions", "Resolved"), "Resueltas", "Resolvidas"),
]


@pytest.mark.parametrize(("message", "es", "pt_br"), TWO_MEANINGS)
def test_a_word_with_two_meanings_reads_each_in_its_own_words(
    message: tuple[str | None, str], es: str, pt_br: str
) -> None:
    context, msgid = message
    for language, expected in (("es", es), ("pt-br", pt_br)):
        with translation.override(language):
            said = gettext(msgid) if context is None else pgettext(context, msgid)
        assert said == expected, (language, message)


def test_a_figure_and_its_amount_are_two_words_in_every_language() -> None:
    for language in ("es", "pt-br"):
        with translation.override(language):
            assert gettext("Figure") != gettext("Amount"), language
