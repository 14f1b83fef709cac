"""Validation of payout and preview bodies (interface.md 2.3 and 4.4, decisions.md 2)."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from emulator.domain.corridors import NETWORKS
from emulator.domain.formats import FieldErrors, optional_str, parse_decimal, parse_payout_amount
from emulator.domain.pricing import ClientMarkup
from emulator.models import VirtualAccount

STABLECOINS = ("USDC", "USDT")
MAX_DOCUMENTS = 10
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
DATA_URI_RE = re.compile(
    r"^data:([\w.+-]+/[\w.+-]+)?(;[\w-]+=[\w.-]+)*;base64,([A-Za-z0-9+/=\s]+)$"
)
EXTRA_INFO_LIMITS = {"memo": 255, "internal_notes": 1000}
BODY_FIELDS = frozenset(
    {
        "recipient_id",
        "amount",
        "quote_id",
        "payment_instructions",
        "supporting_documents",
        "client_markup",
        "extra_info",
        "reference",
    }
)


@dataclass
class PayoutRequest:
    recipient_id: str
    amount: Decimal
    quote_id: uuid.UUID | None = None
    network: str | None = None
    stablecoin: str | None = None
    documents: list[dict[str, Any]] = field(default_factory=list)
    client_markup: ClientMarkup | None = None
    client_markup_raw: dict[str, Any] | None = None
    extra_info: dict[str, str] | None = None
    reference: str = ""

    @property
    def crypto(self) -> bool:
        return self.stablecoin is not None


def _uuid(value: Any, name: str, errors: FieldErrors, required: bool) -> uuid.UUID | None:
    if value is None or value == "":
        if required:
            errors.add(name, "is required")
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        errors.add(name, "must be a UUID")
        return None


def parse_payment_instructions(value: Any, errors: FieldErrors) -> tuple[str | None, str | None]:
    """(stablecoin, network) of `payment_instructions`, the same on a preview and a payout."""
    if value is None:
        return None, None
    if not isinstance(value, dict):
        errors.add("payment_instructions", "must be an object with network and currency")
        return None, None
    currency, network = value.get("currency"), value.get("network")
    if currency not in STABLECOINS:
        errors.add("payment_instructions.currency", "must be USDC or USDT")
        return None, None
    valid = NETWORKS[currency][1]
    if network not in valid:
        errors.add("payment_instructions.network", f"must be one of {', '.join(valid)}")
        return None, None
    return str(currency), str(network)


def _documents(value: Any, errors: FieldErrors) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add("supporting_documents", "must be a list")
        return []
    if len(value) > MAX_DOCUMENTS:
        errors.add("supporting_documents", f"at most {MAX_DOCUMENTS} documents")
        return []
    kept: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        where = f"supporting_documents[{index}]"
        if not isinstance(item, dict):
            errors.add(where, "must be an object with type, file_name and file")
            continue
        doc_type = optional_str(item, "type", errors, 64)
        file_name = optional_str(item, "file_name", errors, 255)
        if not doc_type:
            errors.add(f"{where}.type", "is required")
        if not file_name:
            errors.add(f"{where}.file_name", "is required")
        file = item.get("file")
        match = DATA_URI_RE.match(file) if isinstance(file, str) else None
        if match is None:
            errors.add(f"{where}.file", "must be a base64 data: URI")
            continue
        try:
            content = base64.b64decode(re.sub(r"\s", "", match.group(3)), validate=True)
        except (binascii.Error, ValueError):
            errors.add(f"{where}.file", "is not valid base64")
            continue
        if not content or len(content) > MAX_DOCUMENT_BYTES:
            errors.add(f"{where}.file", "must hold between 1 byte and 10 MiB")
            continue
        kept.append(
            {
                "type": doc_type,
                "file_name": file_name,
                "media_type": match.group(1) or "application/octet-stream",
                "size": len(content),
            }
        )
    return kept


def _client_markup(value: Any, errors: FieldErrors) -> ClientMarkup | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.add("client_markup", "must be an object")
        return None
    figures: dict[str, Decimal] = {}
    for name in ("fixed_fee", "percentage_fee", "fx_markup"):
        raw = value.get(name, 0)
        number = parse_decimal(raw)
        if number is None or number < 0:
            errors.add(f"client_markup.{name}", "must be a number of at least 0")
            return None
        if name != "fixed_fee" and number >= 1:
            errors.add(f"client_markup.{name}", "is a fraction and must be below 1")
            return None
        figures[name] = number
    for name in set(value) - set(figures):
        errors.add(f"client_markup.{name}", "is not a known field")
    return ClientMarkup(**figures)


def _extra_info(value: Any, errors: FieldErrors) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.add("extra_info", "must be an object")
        return None
    kept: dict[str, str] = {}
    for name, item in value.items():
        limit = EXTRA_INFO_LIMITS.get(name)
        if limit is None:
            errors.add(f"extra_info.{name}", "is not a known field")
        elif not isinstance(item, str):
            errors.add(f"extra_info.{name}", "must be a string")
        elif len(item) > limit:
            errors.add(f"extra_info.{name}", f"must be at most {limit} characters")
        else:
            kept[name] = item
    return kept


def parse_payout_request(body: dict[str, Any]) -> PayoutRequest:
    """Every rule that needs only the body; raises one 400 listing each bad field."""
    errors = FieldErrors()
    for name in sorted(set(body) - BODY_FIELDS):
        errors.add(name, "is not a known field")
    recipient_id = _uuid(body.get("recipient_id"), "recipient_id", errors, required=True)
    amount = parse_payout_amount(body.get("amount"), errors)
    quote_id = _uuid(body.get("quote_id"), "quote_id", errors, required=False)
    stablecoin, network = parse_payment_instructions(body.get("payment_instructions"), errors)
    documents = _documents(body.get("supporting_documents"), errors)
    markup = _client_markup(body.get("client_markup"), errors)
    if markup is not None and quote_id is not None:
        errors.add("client_markup", "cannot be combined with quote_id (the quote fixes the fees)")
    extra_info = _extra_info(body.get("extra_info"), errors)
    reference = optional_str(body, "reference", errors, 200)
    errors.raise_if_any()
    assert recipient_id is not None and amount is not None
    return PayoutRequest(
        recipient_id=str(recipient_id),
        amount=amount,
        quote_id=quote_id,
        network=network,
        stablecoin=stablecoin,
        documents=documents,
        client_markup=markup,
        client_markup_raw=body.get("client_markup"),
        extra_info=extra_info,
        reference=reference,
    )


def check_instructions(account: VirtualAccount, *, crypto: bool, errors: FieldErrors) -> None:
    """interface.md 4.4 rule 6, for a payout and for its preview (decisions.md 2: the preview
    takes the same payment_instructions): a crypto account needs them, a fiat one refuses them."""
    if account.mode == "fiat" and crypto:
        errors.add("payment_instructions", "must be absent for a fiat virtual account")
    if account.mode == "crypto" and not crypto:
        errors.add("payment_instructions", "is required for a crypto virtual account")


def check_mode(account: VirtualAccount, request: PayoutRequest) -> None:
    """Mode cross-validation (interface.md 4.4 rules 3 and 6)."""
    errors = FieldErrors()
    check_instructions(account, crypto=request.crypto, errors=errors)
    if account.mode == "crypto" and not request.documents:
        errors.add("supporting_documents", "at least 1 document is required in crypto mode")
    errors.raise_if_any()
