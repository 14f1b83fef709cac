"""The second-factor forms: one code field (an authenticator's code or a recovery code)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy

from staff.models import StaffUser


class CodeForm(forms.Form):
    code = forms.CharField(
        label=gettext_lazy("Code"),
        max_length=32,
        help_text=gettext_lazy(
            "The 6-digit code your authenticator app shows, or one of your recovery codes."
        ),
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "autofocus": True, "spellcheck": "false"}
        ),
    )


class TotpConfirmForm(forms.Form):
    code = forms.CharField(
        label=gettext_lazy("Code from your app"),
        max_length=10,
        help_text=gettext_lazy(
            "Scan the QR code (or type the secret) in your app, then enter its code."
        ),
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


class ResetRequestForm(forms.Form):
    target = forms.ModelChoiceField(
        label=gettext_lazy("Person"),
        queryset=StaffUser.objects.filter(is_active=True).order_by("email"),
        help_text=gettext_lazy(
            "Their authenticator apps, passkeys and recovery codes are removed; they "
            "enrol again at their next sign-in."
        ),
    )
    reason = forms.CharField(
        label=gettext_lazy("Reason"),
        max_length=200,
        help_text=gettext_lazy("Kept in the audit trail, e.g. “lost phone”."),
    )
