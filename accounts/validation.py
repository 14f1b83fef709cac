"""Bank details checked before they are sent: ABA routing numbers, BICs, IBANs (schwifty)."""

from __future__ import annotations

import re

from django.utils.translation import gettext
from schwifty import BIC, IBAN, registry
from schwifty.exceptions import InvalidCountryCode, SchwiftyException

_ABA_WEIGHTS = (3, 7, 1, 3, 7, 1, 3, 7, 1)


def normalise_routing_number(raw: str) -> str:
    """A US ABA routing number: 9 digits whose 3-7-1 weighted sum is a multiple of 10.

    (python-stdnum's `stdnum.us.rtn` is not installed; the checksum is these few lines.)
    """
    digits = re.sub(r"[\s-]", "", raw or "")
    if not re.fullmatch(r"[0-9]{9}", digits):
        raise ValueError(gettext("An ABA routing number has exactly 9 digits."))
    if sum(int(d) * w for d, w in zip(digits, _ABA_WEIGHTS, strict=True)) % 10:
        raise ValueError(
            gettext("This routing number's check digit is wrong: check it for a typo.")
        )
    return digits


def normalise_bic(raw: str) -> str:
    code = re.sub(r"\s", "", raw or "").upper()
    try:
        bic = BIC(code)
    except SchwiftyException as exc:
        raise ValueError(
            gettext("Not a valid SWIFT/BIC code: %(error)s.") % {"error": exc}
        ) from None
    return str(bic)


def uses_iban(country: str) -> bool:
    """Whether accounts in `country` are identified by an IBAN (schwifty's registry)."""
    try:
        registry.get_iban_spec((country or "").upper())
    except (InvalidCountryCode, KeyError):
        return False
    return True


def normalise_iban(raw: str, *, country: str) -> str:
    try:
        iban = IBAN(raw or "")
    except SchwiftyException as exc:
        raise ValueError(gettext("Not a valid IBAN: %(error)s.") % {"error": exc}) from None
    if country and iban.country_code != country.upper():
        raise ValueError(
            gettext("This IBAN is for %(iban_country)s, not %(country)s.")
            % {"iban_country": iban.country_code, "country": country.upper()}
        )
    return iban.compact


def normalise_us_account_number(raw: str) -> str:
    digits = re.sub(r"[\s-]", "", raw or "")
    if not re.fullmatch(r"[0-9]{4,17}", digits):
        raise ValueError(gettext("A US account number has 4 to 17 digits."))
    return digits
