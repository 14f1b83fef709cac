"""The upstream's valid_* lists per environment: seeded from interface.md, refreshed by answers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from gateway.models import Environment
from quotes.models import ValidChoices

# interface.md 4.2, in its order.
SEED_BASE_CURRENCIES: tuple[str, ...] = ("USD", "USDC", "USDT")
SEED_ACCOUNT_TYPES: dict[str, tuple[str, ...]] = {
    "MXN": ("SPEI",),
    "COP": ("PSE", "WALLET"),
    "ARS": ("ARS",),
    "BRL": ("BRL",),
    "CLP": ("CLP",),
    "PEN": ("PEN",),
    "UYU": ("UYU",),
    "GTQ": ("GTQ",),
    "CRC": ("CRC",),
    "DOP": ("DOP",),
    "PYG": ("PYG",),
    "USD": ("ACH", "WIRE", "SWIFT", "PEUSD", "ECUSD", "PAUSD", "SVUSD"),
    "USDC": ("WALLET",),
    "USDT": ("WALLET",),
}
SEED_QUOTE_CURRENCIES: tuple[str, ...] = tuple(SEED_ACCOUNT_TYPES)
# USDT on solana is unconfirmed (interface.md) and refused (decisions.md): not offered.
SEED_NETWORKS: dict[str, tuple[str, ...]] = {
    "USD": (),
    "USDC": ("solana", "polygon"),
    "USDT": ("tron", "polygon"),
}
STABLECOINS: tuple[str, ...] = ("USDC", "USDT")

QUOTE_CURRENCIES = "valid_quote_currencies"
BASE_CURRENCIES = "valid_base_currencies"
ACCOUNT_TYPES = "valid_account_types"  # scope: the quote currency
NETWORKS = "valid_networks"  # scope: the base (stable) currency


def _seed(name: str, scope: str) -> list[str]:
    if name == QUOTE_CURRENCIES:
        return list(SEED_QUOTE_CURRENCIES)
    if name == BASE_CURRENCIES:
        return list(SEED_BASE_CURRENCIES)
    if name == ACCOUNT_TYPES:
        return list(SEED_ACCOUNT_TYPES.get(scope, ()))
    if name == NETWORKS:
        return list(SEED_NETWORKS.get(scope, ()))
    return []


class Choices:
    """Every valid_* list of one environment, read once: stored lists win over the seed."""

    def __init__(self, environment: Environment | None) -> None:
        self._stored: dict[tuple[str, str], list[str]] = {}
        if environment is not None:
            for row in ValidChoices.objects.filter(environment=environment):
                self._stored[(row.name, row.scope)] = list(row.values)

    def get(self, name: str, scope: str = "") -> list[str]:
        return self._stored.get((name, scope)) or _seed(name, scope)

    def base_currencies(self) -> list[str]:
        return self.get(BASE_CURRENCIES)

    def quote_currencies(self) -> list[str]:
        return self.get(QUOTE_CURRENCIES)

    def account_types(self, quote_currency: str) -> list[str]:
        return self.get(ACCOUNT_TYPES, quote_currency)

    def networks(self, base_currency: str) -> list[str]:
        return self.get(NETWORKS, base_currency)

    def all_account_types(self) -> dict[str, list[str]]:
        return {currency: self.account_types(currency) for currency in self.quote_currencies()}

    def all_networks(self) -> dict[str, list[str]]:
        return {currency: self.networks(currency) for currency in self.base_currencies()}


def _strings(values: Any) -> list[str] | None:
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(value, str) and value for value in values):
        return None
    return list(values)


def choices_refresh(
    *, environment: Environment, details: dict[str, Any], base_currency: str, quote_currency: str
) -> list[str]:
    """
    Store every valid_* list an upstream error answer carried, scoped by what the request asked
    (account types depend on the quote currency, networks on the base currency). Returns the
    names refreshed.
    """
    scopes = {
        QUOTE_CURRENCIES: "",
        BASE_CURRENCIES: "",
        ACCOUNT_TYPES: quote_currency,
        NETWORKS: base_currency,
    }
    refreshed: list[str] = []
    with transaction.atomic():
        for name, scope in scopes.items():
            values = _strings(details.get(name))
            if values is None:
                continue
            ValidChoices.objects.update_or_create(
                environment=environment,
                name=name,
                scope=scope,
                defaults={"values": values, "updated_at": timezone.now()},
            )
            refreshed.append(name)
    return refreshed


def names(values: Iterable[str]) -> list[tuple[str, str]]:
    """Form choices from a list of codes."""
    return [(value, value) for value in values]
