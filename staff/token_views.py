"""The profile page where staff create (see once) and revoke their personal API tokens."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from staff.api_tokens import api_token_create, api_token_list, api_token_revoke
from staff.models import ApiToken, StaffUser
from staff.roles import has_staff_role, user_roles


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="What uses it, e.g. “finance ERP” (so you know what to revoke)."
    )


def _staff(request: HttpRequest) -> StaffUser:
    if not has_staff_role(request.user):
        raise PermissionDenied
    return request.user  # type: ignore[return-value]


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    user = _staff(request)
    form = ApiTokenForm(request.POST or None)
    plaintext = None
    if request.method == "POST" and form.is_valid():
        plaintext = api_token_create(user=user, name=form.cleaned_data["name"], by=user).plaintext
        form = ApiTokenForm()
    return render(
        request,
        "staff/profile.html",
        {
            "form": form,
            "new_token": plaintext,
            "tokens": api_token_list(user=user),
            "roles_held": user_roles(user),
        },
    )


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    user = _staff(request)
    token = get_object_or_404(ApiToken, pk=pk, user=user)
    api_token_revoke(token=token, by=user)
    return redirect("profile:profile")
