"""Every main page speaks Spanish and Brazilian Portuguese: walked as the admin (who sees every
page, tests/staff/test_auditor.py's walk) with their language set, no visible text node is an
English message of the catalogs whose translation differs.

A failure lists page and text. A text that comes from Python (a navigation label, a choice's
label, a service's message) belongs to the app catalogs (`<app>/locale/`), a template's to
the root catalog (`locale/`): docs/ui.md, "Languages".
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from staff.models import StaffUser
from tests.i18n.catalogs import read_po
from tests.identity import client_signed_in
from tests.staff.test_auditor import (
    ADMIN_CONFIGURATION_PAGES,
    READ_PAGES,
    WRITE_PAGES,
    _url,
    _walked,
    world,  # noqa: F401  (the pages' records: a draft payout, its end user, account, recipient)
)

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)
VISIBLE_ATTRIBUTES = ("aria-label", "title", "placeholder", "alt")
# Pages the walk above leaves out (their namespaces hold actions too): the person's own.
OWN_PAGES = ("profile:profile", "staff:changes", "staff:second_factor_resets")


def english_messages(lang: str) -> dict[str, str]:
    """The English messages of every catalog whose translation in `lang` differs, without
    placeholders (a whole text node can only equal a message without variables)."""
    found: dict[str, str] = {}
    for po in [ROOT / "locale", *ROOT.glob("*/locale")]:
        path = po / lang / "LC_MESSAGES" / "django.po"
        if not path.exists():
            continue
        for message in read_po(path)[1:]:
            if "%(" in message.msgid or message.msgid_plural:
                continue
            english = " ".join(html.unescape(message.msgid).split())
            translated = " ".join(html.unescape(message.msgstr.get(0, "")).split())
            if english and english != translated and any(c.isalpha() for c in english):
                found[english] = str(path.relative_to(ROOT))
    return found


class _VisibleText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "template"):
            self._hidden += 1
        for name, value in attrs:
            if name in VISIBLE_ATTRIBUTES and value:
                self.texts.append(" ".join(value.split()))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if text and not self._hidden:
            self.texts.append(text)


def visible_texts(page: str) -> list[str]:
    parser = _VisibleText()
    parser.feed(page)
    parser.close()
    return parser.texts


def english_left(page: str, english: dict[str, str]) -> list[str]:
    return sorted({text for text in visible_texts(page) if text in english})


def _pages(world: dict[str, Any]) -> dict[str, str]:  # noqa: F811
    walked = _walked()
    names = (READ_PAGES | ADMIN_CONFIGURATION_PAGES | WRITE_PAGES) & set(walked)
    pages = {name: _url(name, walked[name], world) for name in sorted(names)}
    pages.update({name: reverse(name) for name in OWN_PAGES})
    return {name: url for name, url in pages.items() if "999999" not in url}


@pytest.mark.parametrize("language", ["es", "pt-br"])
def test_every_main_page_is_translated(
    language: str,
    demo_staff: dict[str, StaffUser],
    world: dict[str, Any],  # noqa: F811
) -> None:
    admin = demo_staff["admin"]
    admin.language = language
    admin.save(update_fields=["language"])
    client = client_signed_in(admin)
    english = english_messages("es" if language == "es" else "pt_BR")
    left: dict[str, list[str]] = {}  # English text: the pages it is on
    shown = 0
    for name, url in _pages(world).items():
        response = client.get(url)
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        page = response.content.decode()
        assert f'<html lang="{language}">' in page or "<html" not in page, name
        shown += 1
        for text in english_left(page, english):
            left.setdefault(text, []).append(name)
    assert shown > 40, "the walk reached too few pages"
    assert left == {}, (
        f"{len(left)} English texts left on the {language} pages. A template's string belongs "
        "to locale/, a Python string (navigation, form labels, choices, messages) to its "
        "app's <app>/locale/ (docs/ui.md, Languages):\n"
        + "\n".join(
            f"  {text!r} (a message of {english[text]}) on {len(pages)} pages: "
            + ", ".join(pages[:4])
            + (" ..." if len(pages) > 4 else "")
            for text, pages in sorted(left.items())
        )
    )


def test_the_sign_in_page_follows_the_browser() -> None:
    for accept, lang, heading in [
        ("es-MX,es;q=0.9", "es", "Iniciar sesión"),
        ("pt-BR,pt;q=0.9", "pt-br", "Entrar"),
        ("en-US,en;q=0.9", "en", "Sign in"),
    ]:
        page = Client(HTTP_ACCEPT_LANGUAGE=accept).get(reverse("staff:login")).content.decode()
        assert f'<html lang="{lang}">' in page, accept
        assert heading in visible_texts(page), accept


def test_the_check_finds_an_english_text_node() -> None:
    english = {"Approve": "locale/es/LC_MESSAGES/django.po", "Sign out": "x"}
    page = (
        '<html><body><h1>Aprobar</h1><button aria-label="Sign out">x</button>'
        "<p>Approve</p><p>Approve all</p><script>Approve</script></body></html>"
    )
    assert english_left(page, english) == ["Approve", "Sign out"]
