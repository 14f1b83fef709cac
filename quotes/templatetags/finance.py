"""Deprecated alias of the shared `ui` template library, kept only while payouts loads it.

Every filter here is the `ui` library's own function (console/templatetags/ui.py), so payouts
pages already show money, times, rates and percents the one shared way. Switch
`{% load finance %}` to `{% load ui %}` in templates/payouts/ (and `payouts/forms.py`'s import of
`money` to `console.templatetags.ui`), then delete this module."""

from __future__ import annotations

from django import template

from console.templatetags.ui import iso, money, percent, rate, when

register = template.Library()

for _filter in (iso, money, percent, rate, when):
    register.filter(_filter.__name__, _filter)

__all__ = ["iso", "money", "percent", "rate", "when"]
