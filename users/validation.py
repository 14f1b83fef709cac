"""Checks of end-user fields shared by forms, services and the API: phone, country, email, names."""

from __future__ import annotations

from functools import cache

import phonenumbers
import pycountry
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils.translation import gettext, gettext_lazy


def normalise_phone(raw: str, *, country: str = "") -> str:
    """The number in E.164 (`+5215512345678`), checked with libphonenumber's metadata."""
    text = (raw or "").strip()
    if not text:
        raise ValueError(gettext("Enter a phone number."))
    try:
        number = phonenumbers.parse(text, (country or "").upper() or None)
    except phonenumbers.NumberParseException:
        raise ValueError(
            "Enter the phone number in international form, starting with + and the country code."
        ) from None
    if not phonenumbers.is_valid_number(number):
        raise ValueError(gettext("This is not a valid phone number for its country."))
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


@cache
def country_choices() -> tuple[tuple[str, str], ...]:
    """ISO 3166-1 alpha-2 codes and names, sorted by name."""
    countries = sorted(pycountry.countries, key=lambda c: getattr(c, "common_name", c.name))
    return tuple((c.alpha_2, getattr(c, "common_name", c.name)) for c in countries)


def normalise_country(raw: str) -> str:
    code = (raw or "").strip().upper()
    if len(code) != 2 or pycountry.countries.get(alpha_2=code) is None:
        raise ValueError(gettext("Choose a country from the ISO 3166 list (two-letter code)."))
    return code


def country_name(code: str) -> str:
    country = pycountry.countries.get(alpha_2=(code or "").upper()) if code else None
    return getattr(country, "common_name", getattr(country, "name", code)) if country else code


def normalise_email(raw: str) -> str:
    email = (raw or "").strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ValueError(gettext("Enter a valid email address.")) from None
    return email


def normalise_name(raw: str, *, label: str) -> str:
    value = " ".join((raw or "").split())
    if not value:
        raise ValueError(gettext("Enter the %(label)s.") % {"label": label})
    if len(value) > 200:
        raise ValueError(gettext("The %(label)s is longer than 200 characters.") % {"label": label})
    return value


# Upstream rejection codes in plain words (interface.md names none; the emulator uses
# `document_unreadable`). Unknown codes are shown as they are, underscores as spaces.
REASON_TEXT = {
    "document_unreadable": gettext_lazy("The identity document could not be read."),
    "document_expired": gettext_lazy("The identity document has expired."),
    "document_mismatch": gettext_lazy("The document does not match the details given."),
    "face_mismatch": gettext_lazy("The selfie does not match the document photo."),
    "sanctions_match": gettext_lazy("The person matches a sanctions list."),
    "pep_match": gettext_lazy("The person is a politically exposed person."),
    "underage": gettext_lazy("The person is under the minimum age."),
    "duplicate": gettext_lazy("This person is already registered."),
}


def reason_in_words(code: str) -> str:
    return str(REASON_TEXT.get(code, code.replace("_", " ").strip().capitalize() + "."))
