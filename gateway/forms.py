"""Forms of the environment pages and the call-log filter."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import gettext, gettext_lazy

from console.forms import IsoDateField
from gateway.models import Environment
from gateway.models.environment import CREDENTIALS
from gateway.services.environments import SETTABLE_FIELDS

UNREADABLE_HELP = gettext_lazy(
    "Unreadable: the key it was encrypted with was removed. Enter it again."
)
UNREADABLE_REQUIRED = gettext_lazy("The stored value can no longer be decrypted: enter it again.")


class EnvironmentForm(forms.ModelForm):
    """
    Add or edit an environment. Credentials are write-only: the form never renders their values;
    on edit a blank credential keeps the stored one.
    """

    client_id = forms.CharField(
        label=gettext_lazy("Client ID"), required=False, strip=True, widget=forms.PasswordInput()
    )
    password = forms.CharField(
        label=gettext_lazy("Password"), required=False, strip=False, widget=forms.PasswordInput()
    )
    api_key = forms.CharField(
        label=gettext_lazy("API key"), required=False, strip=True, widget=forms.PasswordInput()
    )

    class Meta:
        model = Environment
        fields = SETTABLE_FIELDS
        labels = {
            "name": gettext_lazy("Name"),
            "kind": gettext_lazy("Kind"),
            "base_url": gettext_lazy("Base URL"),
            "rate_per_second": gettext_lazy("Requests per second"),
            "max_concurrent": gettext_lazy("Concurrent requests"),
            "weekly_budget": gettext_lazy("Weekly budget (requests per ISO week)"),
            "background_share": gettext_lazy("Background share (0 to 1)"),
            "is_active": gettext_lazy("Active"),
            "verification_email": gettext_lazy("Verification email (payout OTP)"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.is_edit = self.instance.pk is not None
        self.fields["background_share"].validators += [
            MinValueValidator(0),
            MaxValueValidator(1),
        ]
        for name in CREDENTIALS:
            field = self.fields[name]
            if not self.is_edit:
                field.required = True
            elif not self.instance.credential_readable(name):
                # Its key was rotated away: keeping "the current value" is no longer possible.
                field.required = True
                field.help_text = UNREADABLE_HELP
                field.error_messages["required"] = UNREADABLE_REQUIRED
            else:
                current = self.instance.credential_masked(name)
                field.help_text = gettext(
                    "Leave blank to keep the current value (%(current)s)."
                ) % {"current": current}

    def credentials(self) -> dict[str, str]:
        """The credentials typed in; blank ones are left out (on edit: keep the stored value)."""
        return {
            name: self.cleaned_data[name] for name in CREDENTIALS if self.cleaned_data.get(name)
        }

    def settings_values(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in self.Meta.fields}


STATUS_CLASSES = (
    ("", gettext_lazy("Any status")),
    ("2xx", gettext_lazy("2xx success")),
    ("4xx", gettext_lazy("4xx refused")),
    ("5xx", gettext_lazy("5xx server error")),
    ("none", gettext_lazy("No response")),
)


class CallLogFilterForm(forms.Form):
    environment = forms.ModelChoiceField(
        label=gettext_lazy("Environment"),
        queryset=Environment.objects.order_by("name"),
        required=False,
        empty_label=gettext_lazy("Any environment"),
    )
    status_class = forms.ChoiceField(
        choices=STATUS_CLASSES, required=False, label=gettext_lazy("Status")
    )
    path = forms.CharField(required=False, max_length=200, label=gettext_lazy("Path contains"))
    date = IsoDateField(required=False, label=gettext_lazy("Date (UTC)"))
