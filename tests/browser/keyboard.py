"""The keyboard alone, in the browser tests: move focus with Tab (or Shift+Tab) until it reaches
an element, and check at every stop that a person sees where focus is.

No mouse, no `element.click()`, no `locator.focus()`: only `page.keyboard`. A focus indicator is
a computed outline at least 2px wide, or a box-shadow, on the focused element itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

FOCUSED = """() => {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    return {
        tag: el.tagName.toLowerCase(),
        text: (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 60),
        outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
        shadow: style.boxShadow !== 'none',
        shown: box.width > 0 && box.height > 0 && box.right > 0 && box.bottom > 0
            && box.left < innerWidth && box.top < innerHeight,
        inMain: !!el.closest('main'),
    };
}"""


def focused(page: Page) -> dict[str, Any] | None:
    """What has focus now (None: nothing but the page), and how it looks."""
    result: dict[str, Any] | None = page.evaluate(FOCUSED)
    return result


def assert_focus_visible(page: Page) -> dict[str, Any]:
    now = focused(page)
    assert now is not None, "nothing has focus"
    assert now["outline"] or now["shadow"], f"no visible focus indicator on {now}"
    assert now["shown"], f"the focused element is off screen: {now}"
    return now


def tab_to(page: Page, selector: str, *, backwards: bool = False, limit: int = 80) -> None:
    """Press Tab (Shift+Tab with `backwards`) until the element matching `selector` has focus,
    checking a visible focus indicator at every stop on the way."""
    key = "Shift+Tab" if backwards else "Tab"
    path = []
    for _ in range(limit):
        page.keyboard.press(key)
        if focused(page) is None:
            continue  # the browser's own chrome between the end and the start of the page
        now = assert_focus_visible(page)
        path.append(f"{now['tag']}:{now['text']}")
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    pytest.fail(f"{key} never reached {selector}; focus went through {path}", pytrace=False)


def assert_skip_link_to_main(page: Page) -> None:
    """The first Tab of a page shows "Skip to content"; Enter on it sends the next Tab into the
    main content, past the top bar and the navigation."""
    page.keyboard.press("Tab")
    now = assert_focus_visible(page)
    assert now["tag"] == "a" and now["text"] == "Skip to content", now
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    after = assert_focus_visible(page)
    assert after["inMain"], f"after the skip link, focus went to {after}, outside the main content"
