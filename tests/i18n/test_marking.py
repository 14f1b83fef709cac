"""Every human-visible string of every product template is marked for translation (issue 23).

The root templates/ are checked here, and every app's templates/ but the emulator's (a guest
that is never shown to staff). A failure names the template and the unmarked text: wrap it
in {% translate %} or {% blocktranslate %} (docs/ui.md, "Languages").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from tests.i18n.marking import unmarked_strings

ROOT = Path(settings.BASE_DIR)
NOT_CHECKED = {"emulator"}  # the upstream's stand-in: a development guest, in English
TEMPLATE_DIRS = [
    ROOT / "templates",
    *sorted(
        path
        for path in ROOT.glob("*/templates")
        if path.parent.name not in NOT_CHECKED and (path.parent / "apps.py").exists()
    ),
]


@pytest.mark.parametrize("folder", TEMPLATE_DIRS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_visible_string_of_the_templates_is_marked(folder: Path) -> None:
    problems = {
        str(path.relative_to(ROOT)): found
        for path in sorted(folder.rglob("*.html"))
        if (found := unmarked_strings(path.read_text(encoding="utf-8")))
    }
    assert problems == {}, "unmarked strings (docs/ui.md, Languages):\n" + "\n".join(
        f"  {name}: {found}" for name, found in problems.items()
    )


def test_the_check_finds_unmarked_text_and_attributes() -> None:
    source = """{% load i18n %}{% comment %}Not shown{% endcomment %}
    <h1>{% translate "Payouts" %}</h1>
    <p>{% blocktranslate with n=count %}{{ n }} payouts{% endblocktranslate %}</p>
    <p>Waiting for approval</p>
    <nav aria-label="Pages"></nav><nav aria-label="{% translate 'Pages' %}"></nav>
    <input placeholder="Search"><img alt="{{ logo_alt }}" src="x.png">
    <span title="Until {{ moment }}">{{ moment }}</span> — {{ amount }} ·
    <script>var notText = "never reported";</script>{# a comment #}
    """
    assert unmarked_strings(source) == [
        "Waiting for approval",
        'aria-label="Pages"',
        'placeholder="Search"',
        'title="Until"',
    ]
