"""
What an approver checks of a recipient's bank details, as rows for a page: the holder, the bank,
its country, the rail and every identifier the rail carries (decisions.md "Recipients": WIRE has
an ABA routing number, SWIFT a BIC; a SWIFT account in an IBAN country is an IBAN).

Routing numbers and BICs are shown whole: they name a bank, are public and are what a swapped
bank shows first. Account numbers and IBANs are shown to the parts a person compares with the
payee's own document (the last four; an IBAN also its country and check digits), never whole: the
queue is read by several roles on shared screens, and a full number on a page is a number copied.
A change shows every field before and after, the changed ones marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext

from accounts.models import FIELD_LABELS, AccountType, RecipientKind
from accounts.validation import uses_iban
from users.validation import country_name


@dataclass(frozen=True)
class DetailRow:
    """One field as a page shows it: `code` values are identifiers (set in monospace)."""

    key: str
    label: str
    value: str
    code: bool = False


@dataclass(frozen=True)
class ComparedRow:
    key: str
    label: str
    before: str
    after: str
    code: bool
    # From the whole values: an account number changed keeps its mark even when its last four
    # digits are the same.
    changed: bool


# The fields behind each row (a row not named here is its own field).
_SOURCES = {
    "holder": ("kind", "first_name", "last_name", "company_name"),
    "address": ("street_name", "city", "state", "postal_code"),
    "bic_country": ("swift_code",),
}


def is_iban(values: dict[str, Any]) -> bool:
    return values.get("account_type") == AccountType.SWIFT and uses_iban(values.get("country", ""))


def account_number_shown(values: dict[str, Any]) -> str:
    """The account number to the parts compared: `…6789`; an IBAN `DE89 …3000`."""
    number = str(values.get("account_number") or "")
    if not number:
        return ""
    if is_iban(values) and len(number) > 8:
        return f"{number[:4]} …{number[-4:]}"
    return f"…{number[-4:]}"


def _holder(values: dict[str, Any]) -> str:
    if values.get("kind") == RecipientKind.COMPANY:
        name = values.get("company_name") or ""
    else:
        name = f"{values.get('first_name') or ''} {values.get('last_name') or ''}".strip()
    kind = dict(RecipientKind.choices).get(values.get("kind") or "", "")
    return f"{name} ({kind})" if kind and name else name


def _address(values: dict[str, Any]) -> str:
    parts = [values.get(k) or "" for k in ("street_name", "city", "state", "postal_code")]
    return ", ".join(p for p in parts if p)


def bank_detail_rows(values: dict[str, Any]) -> list[DetailRow]:
    """The recipient's details (`current_values`-shaped, account number whole or masked) in the
    order an approver reads them against the payee's document."""
    rail = values.get("account_type") or ""
    rows = [
        DetailRow("holder", gettext("Account holder"), _holder(values)),
        DetailRow("email", str(FIELD_LABELS["email"]), values.get("email") or ""),
        DetailRow("address", gettext("Holder's address"), _address(values)),
        DetailRow("bank_name", str(FIELD_LABELS["bank_name"]), values.get("bank_name") or ""),
        DetailRow("country", gettext("Country"), country_name(values.get("country") or "")),
        DetailRow(
            "account_type",
            str(FIELD_LABELS["account_type"]),
            str(dict(AccountType.choices).get(rail, rail)),
        ),
    ]
    if rail == AccountType.WIRE or values.get("routing_number"):
        rows.append(
            DetailRow(
                "routing_number",
                str(FIELD_LABELS["routing_number"]),
                values.get("routing_number") or "",
                code=True,
            )
        )
    if rail == AccountType.SWIFT or values.get("swift_code"):
        swift = values.get("swift_code") or ""
        rows.append(DetailRow("swift_code", "SWIFT/BIC", swift, code=True))
        if len(swift) >= 6:
            rows.append(
                DetailRow("bic_country", gettext("Bank's country (from the BIC)"), swift[4:6])
            )
    rows.append(
        DetailRow(
            "account_number",
            "IBAN" if is_iban(values) else str(FIELD_LABELS["account_number"]),
            account_number_shown(values),
            code=True,
        )
    )
    return rows


def compared_rows(before: dict[str, Any], after: dict[str, Any]) -> list[ComparedRow]:
    """Every field before and after a change, side by side (a field only one side has is
    compared with nothing)."""
    old = {row.key: row for row in bank_detail_rows(before)}
    new = {row.key: row for row in bank_detail_rows(after)}
    keys = list(old) + [k for k in new if k not in old]
    return [
        ComparedRow(
            key=k,
            label=(new.get(k) or old[k]).label,
            before=old[k].value if k in old else "",
            after=new[k].value if k in new else "",
            code=(new.get(k) or old[k]).code,
            changed=any(
                (before.get(f) or "") != (after.get(f) or "") for f in _SOURCES.get(k, (k,))
            ),
        )
        for k in keys
    ]
