"""A small reader of gettext catalogs (.po and .mo), enough for the catalog tests: no dependency.

`read_po(path)` gives the catalog's messages; `po_as_mo_catalog` the dict a compiled .mo of it
holds (what `gettext.GNUTranslations._catalog` reads), so a test can tell a stale .mo.
"""

from __future__ import annotations

import ast
import gettext
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Message:
    msgid: str = ""
    msgid_plural: str = ""
    msgctxt: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False


def _unquote(text: str) -> str:
    return ast.literal_eval(text) if text else ""


def read_po(path: Path) -> list[Message]:
    """Every message of a .po file, the header (msgid "") included, in file order."""
    return parse_po(path.read_text(encoding="utf-8"))


def parse_po(text: str) -> list[Message]:
    """The messages of a catalog's text (see read_po)."""
    messages: list[Message] = []
    current = Message()
    key: tuple[str, int] | None = None
    started = False

    def finish() -> None:
        nonlocal current, started, key
        if started:
            messages.append(current)
        current, started, key = Message(), False, None

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#~"):
            continue  # obsolete entries: makemessages --no-obsolete drops them
        if not line:
            finish()
            continue
        if line.startswith("#,"):
            if started:
                finish()
            current.flags.update(flag.strip() for flag in line[2:].split(","))
            continue
        if line.startswith("#"):
            if started:
                finish()
            continue
        word, _, rest = line.partition(" ")
        if word == "msgctxt":
            if started and key is not None and key[0] == "msgstr":
                finish()
            current.msgctxt, key, started = _unquote(rest), ("msgctxt", 0), True
        elif word == "msgid":
            if started and key is not None and key[0] == "msgstr":
                finish()
            current.msgid, key, started = _unquote(rest), ("msgid", 0), True
        elif word == "msgid_plural":
            current.msgid_plural, key = _unquote(rest), ("msgid_plural", 0)
        elif word.startswith("msgstr"):
            index = int(word[7:-1]) if word.startswith("msgstr[") else 0
            current.msgstr[index], key = _unquote(rest), ("msgstr", index)
        elif line.startswith('"') and key is not None:
            part = _unquote(line)
            if key[0] == "msgctxt":
                current.msgctxt = (current.msgctxt or "") + part
            elif key[0] == "msgid":
                current.msgid += part
            elif key[0] == "msgid_plural":
                current.msgid_plural += part
            else:
                current.msgstr[key[1]] += part
    finish()
    return messages


def po_as_mo_catalog(messages: list[Message]) -> dict[object, str]:
    """What msgfmt writes for these messages, as GNUTranslations reads it back (fuzzy and
    untranslated entries left out, as msgfmt does; the header too, whose dates msgfmt rewrites)."""
    catalog: dict[object, str] = {}
    for message in messages:
        if not message.msgid or "fuzzy" in message.flags:
            continue
        msgid = (
            message.msgid if message.msgctxt is None else f"{message.msgctxt}\x04{message.msgid}"
        )
        if message.msgid_plural:
            if not all(message.msgstr.values()):
                continue
            for index, text in message.msgstr.items():
                catalog[(msgid, index)] = text
        elif message.msgstr.get(0):
            catalog[msgid] = message.msgstr[0]
    return catalog


def read_mo(path: Path) -> dict[object, str]:
    """A compiled catalog's messages, its header left out."""
    with path.open("rb") as handle:
        catalog = dict(gettext.GNUTranslations(handle)._catalog)  # type: ignore[attr-defined]
    catalog.pop("", None)
    return catalog
