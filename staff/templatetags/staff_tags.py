"""Template helpers for the sign-in pages: durations in words."""

from __future__ import annotations

from datetime import timedelta

from django import template
from django.utils.translation import gettext, ngettext

register = template.Library()


@register.filter
def change_value(value: object) -> str:
    """A value of an admin change's before/after as a person reads it (lists joined, "—" empty)."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    return str(value)


@register.filter
def duration_words(value: timedelta | None) -> str:
    """15 minutes, 1 hour 30 minutes, 45 seconds."""
    if value is None:
        return ""
    seconds = max(int(value.total_seconds()), 0)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [
        text % {"count": amount}
        for amount, text in (
            (hours, ngettext("%(count)s hour", "%(count)s hours", hours)),
            (minutes, ngettext("%(count)s minute", "%(count)s minutes", minutes)),
            (seconds, ngettext("%(count)s second", "%(count)s seconds", seconds)),
        )
        if amount
    ]
    return " ".join(parts) or gettext("a moment")


@register.inclusion_tag("staff/includes/sign_in_security.html", takes_context=True)
def sign_in_security(context: template.Context) -> dict[str, object]:
    """The profile's second-factor section for the signed-in person."""
    from django.urls import reverse

    from staff.second_factor.devices import device_rows, enrolment_required, recovery_device
    from staff.second_factor.reset import is_admin

    user = context["request"].user
    recovery = recovery_device(user)
    return {
        "devices": device_rows(user),
        "required": enrolment_required(user),
        "recovery_left": recovery.remaining() if recovery else 0,
        "enrol_url": reverse("staff:enrol"),
        "csrf_token": context.get("csrf_token"),
        "resets_url": reverse("staff:second_factor_resets") if is_admin(user) else None,
    }


@register.inclusion_tag("staff/includes/passkey_scripts.html", takes_context=True)
def passkey_scripts(context: template.Context, ceremony: str) -> dict[str, object]:
    """django-otp-webauthn's configuration and scripts for "auth" or "register".

    Its own tags load the translations asynchronously, so a quick click could find `gettext`
    missing; here they load first (a plain script), then the module.
    """
    from django_otp_webauthn.templatetags.otp_webauthn import get_configuration

    if ceremony not in ("auth", "register"):
        raise template.TemplateSyntaxError("passkey_scripts takes 'auth' or 'register'.")
    return {"configuration": get_configuration(context["request"]), "ceremony": ceremony}
