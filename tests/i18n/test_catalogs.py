"""Every catalog (the root templates' locale/ and each app's) is complete in Spanish and
Brazilian Portuguese, nothing fuzzy, and its committed .mo is compiled from its .po: the app
runs without gettext installed, so a stale .mo would show old or English text."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from tests.i18n.catalogs import po_as_mo_catalog, read_mo, read_po

ROOT = Path(settings.BASE_DIR)
LANGUAGES = ("es", "pt_BR")
LOCALE_DIRS = [
    ROOT / "locale",
    *sorted(path for path in ROOT.glob("*/locale") if (path.parent / "apps.py").exists()),
]
CATALOGS = [
    folder / lang / "LC_MESSAGES" / "django.po" for folder in LOCALE_DIRS for lang in LANGUAGES
]


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_settings_offer_the_catalogs_languages() -> None:
    assert [code for code, _name in settings.LANGUAGES] == ["en", "es", "pt-br"]
    assert ROOT / "locale" in [Path(path) for path in settings.LOCALE_PATHS]


@pytest.mark.parametrize("po", CATALOGS, ids=_id)
def test_every_message_is_translated_and_none_is_fuzzy(po: Path) -> None:
    assert po.exists(), f"{_id(po)} is missing: run `make messages` and translate it"
    messages = read_po(po)[1:]  # the header aside
    assert messages, f"{_id(po)} has no messages"
    untranslated = [m.msgid for m in messages if not all(m.msgstr.values()) or not m.msgstr]
    fuzzy = [m.msgid for m in messages if "fuzzy" in m.flags]
    assert untranslated == [], f"{_id(po)}: untranslated {untranslated}"
    assert fuzzy == [], f"{_id(po)}: fuzzy (check the translation, then drop the flag) {fuzzy}"


@pytest.mark.parametrize("po", CATALOGS, ids=_id)
def test_the_compiled_catalog_is_up_to_date(po: Path) -> None:
    mo = po.with_suffix(".mo")
    assert mo.exists(), f"{_id(mo)} is missing: run `make messages` and commit it"
    assert read_mo(mo) == po_as_mo_catalog(read_po(po)), f"{_id(mo)} is stale: `make messages`"


def test_the_reader_tells_a_stale_or_incomplete_catalog(tmp_path: Path) -> None:
    po = tmp_path / "django.po"
    po.write_text(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "Approve"\nmsgstr "Aprobar"\n\n'
        '#, fuzzy\nmsgid "Reject"\nmsgstr "Rechazar"\n\n'
        'msgid "%(n)s payout"\nmsgid_plural "%(n)s payouts"\nmsgstr[0] "%(n)s pago"\n'
        'msgstr[1] ""\n',
        encoding="utf-8",
    )
    messages = read_po(po)
    assert [m.msgid for m in messages] == ["", "Approve", "Reject", "%(n)s payout"]
    assert "fuzzy" in messages[2].flags
    assert messages[3].msgstr == {0: "%(n)s pago", 1: ""}
    # msgfmt leaves fuzzy and half-translated messages out: a .mo of only "Approve" is current.
    assert po_as_mo_catalog(messages) == {"Approve": "Aprobar"}
    assert po_as_mo_catalog(messages) != read_mo(ROOT / "locale/es/LC_MESSAGES/django.mo")
