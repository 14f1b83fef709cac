"""Every quotation error code lands on the field it concerns, with the valid choices."""

from __future__ import annotations

import re
from decimal import Decimal as D
from pathlib import Path

import pytest
from django.conf import settings

from gateway.errors import error_from_response
from gateway.models import Environment
from quotes.choices import Choices
from quotes.errors import CODE_FIELDS, LIST_FIELDS, quote_errors
from quotes.models import Quote, ValidChoices
from quotes.services import QuoteRefused, quote_recheck, quote_request
from staff.models import StaffUser


def _emulator_codes() -> set[str]:
    """Every code the emulator's quotation code raises with quote_error(status, "CODE", ...)."""
    sources = sorted(Path(settings.BASE_DIR, "emulator").rglob("*.py"))
    text = "\n".join(path.read_text() for path in sources)
    return set(re.findall(r'quote_error\(\s*\d+,\s*"([A-Z_]+)"', text))


def test_every_emulator_quotation_code_has_a_field_mapping() -> None:
    codes = _emulator_codes()
    assert codes >= {"QUOTE_NOT_FOUND", "FEES_EXCEED_AMOUNT", "CURRENCY_PAIR_NOT_ENABLED"}
    assert codes <= set(CODE_FIELDS), codes - set(CODE_FIELDS)


@pytest.mark.parametrize(
    ("status", "body", "field", "choices"),
    [
        (
            400,
            '{"error": "quote_currency is required", "valid_quote_currencies": ["MXN"]}',
            "quote_currency",
            ["MXN"],
        ),
        (
            400,
            '{"error": "amount must be a positive number", "valid_quote_currencies": ["MXN"]}',
            "amount",
            [],
        ),
        (
            400,
            '{"error": "amount_in_destination must be a boolean", '
            '"valid_quote_currencies": ["MXN"]}',
            "amount_in_destination",
            [],
        ),
        (
            400,
            '{"error": "invalid base_currency", "valid_base_currencies": ["USD"]}',
            "base_currency",
            ["USD"],
        ),
        (
            400,
            '{"error": "invalid network for the base currency", "valid_networks": ["tron"]}',
            "network",
            ["tron"],
        ),
        (
            400,
            '{"error": "invalid account_type for the currency", "valid_account_types": ["ACH"]}',
            "account_type",
            ["ACH"],
        ),
        (
            400,
            '{"error": {"code": "CURRENCY_PAIR_NOT_ENABLED", "message": "x", "details": {}}}',
            "account_type",
            [],
        ),
        (
            409,
            '{"error": {"code": "FEES_EXCEED_AMOUNT", "message": "x", "details": {}}}',
            "amount",
            [],
        ),
        (
            400,
            '{"error": {"code": "INVALID_CALCULATED_AMOUNT", "message": "x", "details": {}}}',
            "amount",
            [],
        ),
        (404, '{"error": {"code": "QUOTE_NOT_FOUND", "message": "x"}}', None, []),
        (400, '{"error": {"code": "QUOTE_INVALID_STATE", "message": "x"}}', None, []),
        (401, '{"code": "unauthorized", "message": "no client ID found in claims"}', None, []),
        (429, "", None, []),
    ],
)
def test_each_documented_error_maps_to_its_field(
    status: int, body: str, field: str | None, choices: list[str]
) -> None:
    [error] = quote_errors(error_from_response(status, body))
    assert error.field == field
    assert error.choices == choices
    assert error.message


def test_every_valid_list_names_a_request_field() -> None:
    assert set(LIST_FIELDS.values()) <= {
        "quote_currency",
        "base_currency",
        "account_type",
        "network",
    }


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("request_values", "field", "code", "choices"),
    [
        ({"quote_currency": "XXX"}, "quote_currency", "", "valid_quote_currencies"),
        ({"quote_currency": ""}, "quote_currency", "", "valid_quote_currencies"),
        ({"base_currency": "EUR"}, "base_currency", "", "valid_base_currencies"),
        (
            {"quote_currency": "USD", "account_type": "SPEI"},
            "account_type",
            "",
            "valid_account_types",
        ),
        ({"base_currency": "USDT", "network": "solana"}, "network", "", "valid_networks"),
        (
            {"quote_currency": "COP", "account_type": "WALLET"},
            "account_type",
            "CURRENCY_PAIR_NOT_ENABLED",
            None,
        ),
        (
            {"quote_currency": "USD", "account_type": "WIRE", "amount": D("10")},
            "amount",
            "FEES_EXCEED_AMOUNT",
            None,
        ),
        (
            {"amount": D("0.01"), "amount_in_destination": True},
            "amount",
            "INVALID_CALCULATED_AMOUNT",
            None,
        ),
    ],
)
def test_the_emulator_refusals_land_on_their_fields_with_the_valid_choices(
    sandbox: Environment,
    maker: StaffUser,
    request_values: dict[str, object],
    field: str,
    code: str,
    choices: str | None,
) -> None:
    values: dict[str, object] = {
        "base_currency": "USD",
        "quote_currency": "MXN",
        "amount": D("100"),
    }
    values.update(request_values)
    with pytest.raises(QuoteRefused) as refused:
        quote_request(by=maker, environment=sandbox, **values)  # type: ignore[arg-type]
    [error] = refused.value.refusals
    assert (error.field, error.code) == (field, code)
    if choices:
        assert error.choices, "the valid choices travel with the error"
        # ...and the environment now keeps the upstream's list.
        assert ValidChoices.objects.filter(environment=sandbox, name=choices).exists()


@pytest.mark.django_db(transaction=True)
def test_the_upstream_list_replaces_the_seed_for_that_environment(
    sandbox: Environment, maker: StaffUser
) -> None:
    with pytest.raises(QuoteRefused):
        quote_request(
            by=maker,
            environment=sandbox,
            base_currency="USDT",
            quote_currency="MXN",
            amount=D("5"),
            network="solana",
        )
    assert Choices(sandbox).networks("USDT") == ["tron", "polygon"]
    ValidChoices.objects.filter(environment=sandbox, name="valid_networks").update(values=["tron"])
    assert Choices(sandbox).networks("USDT") == ["tron"]
    assert Choices(None).networks("USDT") == ["tron", "polygon"]


@pytest.mark.django_db(transaction=True)
def test_an_unknown_quote_is_quote_not_found(sandbox: Environment, maker: StaffUser) -> None:
    quote = quote_request(
        by=maker, environment=sandbox, base_currency="USD", quote_currency="MXN", amount=D("100")
    )
    Quote.objects.filter(pk=quote.pk).update(upstream_id="00000000-0000-4000-8000-000000000000")
    quote.refresh_from_db()
    with pytest.raises(QuoteRefused) as refused:
        quote_recheck(by=maker, quote=quote)
    assert refused.value.refusals[0].field is None
    assert "does not know" in refused.value.refusals[0].message
