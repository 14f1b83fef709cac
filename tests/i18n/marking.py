"""Finds the human-visible text of a Django template that is not marked for translation.

What is left once {% translate %} and {% blocktranslate %} blocks, comments, scripts, styles,
template tags and {{ variables }} are taken out: a text node, or an aria-label, title,
placeholder or alt value, with a letter in it is a string nobody can translate.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

VISIBLE_ATTRIBUTES = ("aria-label", "title", "placeholder", "alt")
LETTER = re.compile(r"[^\W\d_]")

_REMOVED = [
    re.compile(r"{%\s*comment\b.*?%}.*?{%\s*endcomment\s*%}", re.S),
    re.compile(r"{#.*?#}", re.S),
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"{%\s*verbatim\b.*?%}.*?{%\s*endverbatim\s*%}", re.S),
    re.compile(r"{%\s*blocktrans(?:late)?\b.*?%}.*?{%\s*endblocktrans(?:late)?\s*%}", re.S),
    re.compile(r"{%\s*trans(?:late)?\s.*?%}", re.S),
    re.compile(r"(<script\b[^>]*>).*?(</script>)", re.S | re.I),
    re.compile(r"(<style\b[^>]*>).*?(</style>)", re.S | re.I),
]
_TEMPLATE_SYNTAX = re.compile(r"{%.*?%}|{{.*?}}", re.S)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if LETTER.search(text):
            self.found.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in VISIBLE_ATTRIBUTES and value and LETTER.search(value):
                self.found.append(f'{name}="{value.strip()}"')


def unmarked_strings(source: str) -> list[str]:
    """The visible strings of a template's source that are not marked for translation."""
    for pattern in _REMOVED:
        source = pattern.sub(lambda m: "".join(g or "" for g in m.groups()) or " ", source)
    # A tag or variable inside an attribute value leaves nothing; between text it splits words.
    source = _TEMPLATE_SYNTAX.sub(" ", source)
    collector = _Collector()
    collector.feed(source)
    collector.close()
    return collector.found
