"""The statements page's and the fees report's filter bars."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django import forms
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from accounts.models import VirtualAccount
from console.forms import IsoDateField
from staff.errors import ServiceError

# The longest period a page or an export covers (a year and a day: a leap year's statement).
MAX_DAYS = 366


def month_to_date() -> tuple[date, date]:
    today = timezone.now().date()
    return today.replace(day=1), today


def last_month() -> tuple[date, date]:
    """The whole calendar month before today's (UTC)."""
    end = month_to_date()[0] - timedelta(days=1)
    return end.replace(day=1), end


def period_checked(start: date | None, end: date | None) -> tuple[date, date]:
    """The period an API call covers: month to date where not given; refused on `end` when it
    ends before it starts or covers more than MAX_DAYS (the pages' PeriodForm says the same)."""
    first, last = month_to_date()
    start, end = start or first, end or last
    if end < start:
        raise ServiceError(
            gettext("The period ends before it starts."), errors=[("end", gettext("before start"))]
        )
    if (end - start).days >= MAX_DAYS:
        raise ServiceError(
            gettext("A period covers at most %(MAX_DAYS)s days.") % {"MAX_DAYS": MAX_DAYS},
            errors=[("end", gettext("period too long"))],
        )
    return start, end


class PeriodForm(forms.Form):
    start = IsoDateField(required=False, label=gettext_lazy("From (day, UTC)"))
    end = IsoDateField(required=False, label=gettext_lazy("To (day, included)"))

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        first, last = month_to_date()
        start = cleaned.get("start") or first
        end = cleaned.get("end") or last
        if end < start:
            self.add_error("end", gettext("must be on or after the From day"))
        elif (end - start).days >= MAX_DAYS:
            self.add_error(
                "end", gettext("a period covers at most %(days)s days") % {"days": MAX_DAYS}
            )
        cleaned["start"], cleaned["end"] = start, end
        return cleaned


class StatementForm(PeriodForm):
    account = forms.ChoiceField(label=gettext_lazy("Virtual account"))
    on = IsoDateField(required=False, label=gettext_lazy("Balance as of (day)"))

    field_order = ["account", "start", "end", "on"]

    def __init__(self, *args: Any, accounts: list[VirtualAccount], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.accounts = {str(va.pk): va for va in accounts}
        self.fields["account"].choices = [  # type: ignore[attr-defined]
            (key, f"{va.end_user} · {va}") for key, va in self.accounts.items()
        ]

    def account_chosen(self) -> VirtualAccount | None:
        if not self.is_bound or not self.is_valid():
            return None
        return self.accounts.get(self.cleaned_data["account"])


class FeesReportForm(PeriodForm):
    environment = forms.ChoiceField(required=False, label=gettext_lazy("Environment"))
    corridor = forms.ChoiceField(required=False, label=gettext_lazy("Corridor"))

    def __init__(
        self,
        *args: Any,
        environments: list[tuple[str, str]],
        corridors: list[str],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["environment"].choices = [("", gettext("All environments")), *environments]  # type: ignore[attr-defined]
        self.fields["corridor"].choices = [("", gettext("All corridors"))] + [  # type: ignore[attr-defined]
            (name, name) for name in corridors
        ]
