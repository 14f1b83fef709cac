"""Staff forms: sign-in with a clear error message and case-insensitive email."""

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.utils.translation import gettext_lazy


class StaffLoginForm(AuthenticationForm):
    username = forms.EmailField(
        label=gettext_lazy("Email"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "username"}),
    )

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": (
            gettext_lazy(
                "Wrong email or password. Check both and try again; repeated failures lock "
                "sign-in for a while."
            )
        ),
        "inactive": gettext_lazy("This account is disabled. Ask an administrator to re-enable it."),
    }

    def clean_username(self) -> str:
        # Emails are stored lower-case (StaffUserManager), so sign-in ignores case.
        return str(self.cleaned_data["username"]).strip().lower()
