"""Payout page filters: `{{ payout|recipient_flag }}` (dual control on bank details)."""

from __future__ import annotations

from django import template

from payouts.approval.selectors import recipient_flag as flag_of
from payouts.models import Payout

register = template.Library()


@register.filter
def recipient_flag(payout: Payout) -> str:
    return flag_of(payout)
