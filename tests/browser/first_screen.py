"""The next action on a payout is on the first screen, at a desktop's and a phone's width."""

from __future__ import annotations

from playwright.sync_api import Page, expect

SCREEN_HEIGHT = 800
WIDTHS = (1280, 390)


def assert_next_action_on_first_screen(page: Page) -> None:
    """At each width (800 px high), scrolled to the top, the next action's box starts on screen;
    then the page is back at its own size."""
    action = page.get_by_test_id("next-action")
    expect(action).to_be_visible()
    own_size = page.viewport_size
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": SCREEN_HEIGHT})
        page.evaluate("() => window.scrollTo(0, 0)")
        box = action.bounding_box()
        assert box is not None
        assert box["y"] < SCREEN_HEIGHT, f"the next action starts at {box['y']} px at {width} px"
    if own_size is not None:
        page.set_viewport_size(own_size)
