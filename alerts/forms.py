"""Forms of the alert pages: the history's filter bar, a rule with its kind's thresholds, my
choices."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from alerts.conditions import Condition, kind_choices
from alerts.models import AlertState, Severity, SubscriptionMode
from console.inputs import TextField


class AlertFilterForm(forms.Form):
    state = forms.ChoiceField(
        required=False, choices=[("", _("Any state")), *AlertState.choices], label=_("State")
    )
    kind = forms.ChoiceField(required=False, label=_("Kind"))
    environment = forms.ChoiceField(required=False, label=_("Environment"))

    def __init__(self, *args: Any, environments: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [("", _("Any kind")), *kind_choices()]  # type: ignore[attr-defined]
        self.fields["environment"].choices = [("", _("Any environment")), *environments]  # type: ignore[attr-defined]

    def filters(self) -> dict[str, str]:
        data = self.cleaned_data if self.is_bound and hasattr(self, "cleaned_data") else {}
        return {key: data.get(key) or "" for key in ("state", "kind", "environment")}


class RuleForm(forms.Form):
    """A rule of one kind: its name, environment, severity, webhook, and the kind's thresholds
    (one field each, named `threshold_<name>`)."""

    name = TextField(max_length=120, label=_("Name"))
    environment = forms.ChoiceField(required=False, label=_("Environment"))
    severity = forms.ChoiceField(choices=Severity.choices, label=_("Severity"))
    webhook_url = forms.CharField(
        required=False,
        max_length=2000,
        label=_("Webhook URL"),
        help_text=_(
            "A Slack-compatible incoming webhook (https). Stored encrypted and never shown "
            "again; leave empty to keep the current one."
        ),
        widget=forms.PasswordInput(render_value=False),
    )
    webhook_remove = forms.BooleanField(required=False, label=_("Remove the webhook"))

    def __init__(
        self,
        *args: Any,
        condition: Condition,
        environments: list[tuple[str, str]],
        editing: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.condition = condition
        if condition.per_environment:
            self.fields["environment"].choices = [("", _("Every environment")), *environments]  # type: ignore[attr-defined]
        else:
            del self.fields["environment"]
        if not editing:
            del self.fields["webhook_remove"]
        for threshold in condition.thresholds:
            self.fields[f"threshold_{threshold.name}"] = forms.IntegerField(
                label=str(threshold.label),
                min_value=threshold.minimum,
                max_value=threshold.maximum,
                initial=threshold.default,
            )

    def thresholds(self) -> dict[str, int]:
        return {t.name: self.cleaned_data[f"threshold_{t.name}"] for t in self.condition.thresholds}


class SubscriptionForm(forms.Form):
    mode = forms.ChoiceField(
        required=False,
        choices=[("", _("Not subscribed")), *SubscriptionMode.choices],
        label=_("Delivery"),
    )
