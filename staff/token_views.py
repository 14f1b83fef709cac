"""The profile page where staff choose their language and create (see once) and revoke their
personal API tokens."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from staff.api_tokens import (
    DAYS_CHOICES,
    DEFAULT_DAYS,
    DEFAULT_SCOPES,
    api_token_create,
    api_token_list,
    api_token_revoke,
    default_scopes,
    scopes_within_role,
)
from staff.errors import ServiceError
from staff.models import ApiToken, StaffUser
from staff.roles import TOKEN_SCOPE_LABELS, has_staff_role, user_roles
from staff.services import staff_language_set
from staff.step_up import StepUpRequired


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Name"),
        max_length=100,
        help_text=gettext_lazy("What uses it, e.g. “finance ERP” (so you know what to revoke)."),
    )
    scopes = forms.MultipleChoiceField(
        label=gettext_lazy("Scopes"),
        choices=list(TOKEN_SCOPE_LABELS.items()),
        initial=list(DEFAULT_SCOPES),
        widget=forms.CheckboxSelectMultiple,
        help_text=gettext_lazy(
            "Give it only what the integration needs; it never exceeds your own role."
        ),
    )
    days = forms.TypedChoiceField(
        label=gettext_lazy("Expires after"),
        choices=[(days, f"{days} days") for days in DAYS_CHOICES],
        coerce=int,
        initial=DEFAULT_DAYS,
    )

    def __init__(self, *args: Any, user: StaffUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Only the scopes that give this person something: a token never exceeds its owner.
        field = self.fields["scopes"]
        assert isinstance(field, forms.MultipleChoiceField)
        days = self.fields["days"]
        assert isinstance(days, forms.TypedChoiceField)
        days.choices = [
            (n, ngettext("%(days)s day", "%(days)s days", n) % {"days": n}) for n in DAYS_CHOICES
        ]
        allowed = scopes_within_role(user)
        field.choices = [
            (scope, label) for scope, label in TOKEN_SCOPE_LABELS.items() if scope in allowed
        ]
        field.initial = default_scopes(user)


class LanguageForm(forms.Form):
    language = forms.ChoiceField(
        label=gettext_lazy("Language"),
        choices=[("", gettext_lazy("The browser's language")), *settings.LANGUAGES],
        required=False,
        help_text=gettext_lazy("The language of the pages and emails PayOps shows you."),
    )


def _staff(request: HttpRequest) -> StaffUser:
    if not has_staff_role(request.user):
        raise PermissionDenied
    return request.user  # type: ignore[return-value]


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    user = _staff(request)
    form = ApiTokenForm(request.POST or None, user=user)
    plaintext = None
    step_up_url = None
    if request.method == "POST" and form.is_valid():
        try:
            plaintext = api_token_create(
                user=user,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                days=form.cleaned_data["days"],
                by=user,
            ).plaintext
        except StepUpRequired as exc:
            form.add_error(None, exc.message)
            step_up_url = reverse("staff:step_up") + "?" + urlencode({"next": request.path})
        except ServiceError as exc:
            exc.add_to_form(form)
        else:
            form = ApiTokenForm(user=user)
    return render(
        request,
        "staff/profile.html",
        {
            "form": form,
            "new_token": plaintext,
            "step_up_url": step_up_url,
            "tokens": api_token_list(user=user),
            "roles_held": user_roles(user),
            "language_form": LanguageForm(initial={"language": user.language}),
        },
    )


@login_required
@require_POST
def language(request: HttpRequest) -> HttpResponse:
    """Save the person's language: the next page speaks it (staff.middleware.language_middleware)"""
    user = _staff(request)
    form = LanguageForm(request.POST)
    if form.is_valid():
        try:
            staff_language_set(user=user, language=form.cleaned_data["language"], by=user)
        except ServiceError as exc:
            messages.error(request, exc.as_message())
        else:
            translation.activate(user.language or translation.get_language_from_request(request))
            messages.success(request, _("Your language is saved."))
    else:
        messages.error(request, _("Choose one of the offered languages."))
    return redirect("profile:profile")


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    user = _staff(request)
    token = get_object_or_404(ApiToken, pk=pk, user=user)
    api_token_revoke(token=token, by=user)
    return redirect("profile:profile")
