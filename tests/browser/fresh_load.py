"""A page kept up to date live must read as the same page loaded fresh (tests/browser).

`expect_as_a_fresh_load(page)` opens the page's address in a second tab, reads the visible text
of its main content, and waits until the live page reads the same: every fact a change affects
must have been re-read, not only the badge that names the change.
"""

from __future__ import annotations

import difflib
import time

from playwright.sync_api import Page

# The visible text of <main>, lines trimmed, empty ones dropped; a running countdown reads as
# "<countdown>" (it ticks; whether one shows at all still counts). One call: no tick in between.
MAIN_TEXT = """() => {
  const main = document.querySelector("#main");
  let text = main.innerText;
  main.querySelectorAll("[data-countdown]").forEach((el) => {
    if (el.innerText) { text = text.split(el.innerText).join("<countdown>"); }
  });
  return text.split("\\n").map((line) => line.replace(/\\s+/g, " ").trim()).filter(Boolean);
}"""


def main_text(page: Page) -> list[str]:
    return list(page.evaluate(MAIN_TEXT))


def expect_as_a_fresh_load(page: Page, *, within_ms: int) -> None:
    """Wait (at most `within_ms`, a bound on the wait, not a performance figure) until `page`
    reads as the same address loaded fresh in another tab; fail with the difference otherwise."""
    fresh = page.context.new_page()
    try:
        fresh.goto(page.url)
        expected = main_text(fresh)
    finally:
        fresh.close()
    deadline = time.monotonic() + within_ms / 1000
    while (shown := main_text(page)) != expected and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    difference = "\n".join(difflib.unified_diff(expected, shown, "fresh load", "live", lineterm=""))
    assert shown == expected, f"the live page differs from a fresh load:\n{difference}"
