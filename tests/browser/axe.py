"""axe-core in the browser tests: `assert_accessible(page)` checks the page as it is now.

The engine comes from npm (package.json, `make test` runs `npm ci`), never from a CDN. Our
pages forbid inline script (the strict Content-Security-Policy), so the engine is not added as a
`<script>`: Playwright's `page.evaluate` runs its source through the DevTools protocol, which the
page's CSP does not govern, and the page's own policy stays on (no `bypass_csp`).

The standard is WCAG 2.2 AA (with the A and 2.0/2.1 rules it builds on); a page fails on any
violation whose impact is serious or critical, with a readable list of what and where.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Page

AXE_SOURCE = Path(settings.BASE_DIR, "node_modules", "axe-core", "axe.min.js")
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
FAILING_IMPACTS = ("serious", "critical")

RUN = """async (tags) => {
    // resultTypes: only violations are worked out in full (passes are not needed: faster).
    const results = await axe.run(document, {
        runOnly: {type: 'tag', values: tags}, resultTypes: ['violations'],
    });
    return results.violations.map(v => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.map(n => n.target.join(' ')),
    }));
}"""


@cache
def axe_source() -> str:
    if not AXE_SOURCE.exists():
        # Fail, never skip: `make test` (CI's too) puts it there.
        pytest.fail(
            f"{AXE_SOURCE} is missing: run `make test-tools` (npm ci; `make test` runs it).",
            pytrace=False,
        )
    return AXE_SOURCE.read_text(encoding="utf-8")


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Every WCAG 2.2 AA violation axe finds on the page as it is now (any impact)."""
    page.wait_for_load_state()
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    violations: list[dict[str, Any]] = page.evaluate(RUN, WCAG_TAGS)
    return violations


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"- {violation['id']} ({violation['impact']}): {violation['help']}")
        lines.extend(f"    at {target}" for target in violation["targets"][:10])
        if len(violation["targets"]) > 10:
            lines.append(f"    … and {len(violation['targets']) - 10} more")
    return "\n".join(lines)


def serious_violations(page: Page) -> list[dict[str, Any]]:
    return [v for v in axe_violations(page) if v["impact"] in FAILING_IMPACTS]


def assert_accessible(page: Page, where: str = "") -> None:
    """Fail when axe finds a serious or critical WCAG 2.2 AA violation on the page."""
    found = serious_violations(page)
    if found:
        place = where or page.url
        pytest.fail(
            f"axe: {len(found)} serious or critical WCAG 2.2 AA violation(s) on {place}:\n"
            + describe(found),
            pytrace=False,
        )
