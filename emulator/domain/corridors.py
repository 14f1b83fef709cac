"""Seeded market data of the emulator: currencies, rails, networks, rates and fee profiles."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

BASE_CURRENCIES: tuple[str, ...] = ("USD", "USDC", "USDT")

# quote_currency -> (default account_type, valid account types), in interface.md 4.2's order.
ACCOUNT_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "MXN": ("SPEI", ("SPEI",)),
    "COP": ("PSE", ("PSE", "WALLET")),
    "ARS": ("ARS", ("ARS",)),
    "BRL": ("BRL", ("BRL",)),
    "CLP": ("CLP", ("CLP",)),
    "PEN": ("PEN", ("PEN",)),
    "UYU": ("UYU", ("UYU",)),
    "GTQ": ("GTQ", ("GTQ",)),
    "CRC": ("CRC", ("CRC",)),
    "DOP": ("DOP", ("DOP",)),
    "PYG": ("PYG", ("PYG",)),
    "USD": ("ACH", ("ACH", "WIRE", "SWIFT", "PEUSD", "ECUSD", "PAUSD", "SVUSD")),
    "USDC": ("WALLET", ("WALLET",)),
    "USDT": ("WALLET", ("WALLET",)),
}
QUOTE_CURRENCIES: tuple[str, ...] = tuple(ACCOUNT_TYPES)

# base_currency -> (default network, valid networks). USDT on solana is unconfirmed: refused.
NETWORKS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "USD": (None, ()),
    "USDC": ("solana", ("solana", "polygon")),
    "USDT": ("tron", ("tron", "polygon")),
}

NETWORK_FEES: dict[tuple[str, str], Decimal] = {
    ("USDC", "solana"): Decimal("0.50"),
    ("USDC", "polygon"): Decimal("0.20"),
    ("USDT", "tron"): Decimal("1.00"),
    ("USDT", "polygon"): Decimal("0.20"),
}

# Commercial mid rates, units of quote currency per 1 USD; stablecoins count as USD 1:1.
RATES: dict[str, Decimal] = {
    "MXN": Decimal("17.250000"),
    "COP": Decimal("3950.000000"),
    "ARS": Decimal("1050.000000"),
    "BRL": Decimal("5.450000"),
    "CLP": Decimal("940.000000"),
    "PEN": Decimal("3.720000"),
    "UYU": Decimal("40.100000"),
    "GTQ": Decimal("7.750000"),
    "CRC": Decimal("515.000000"),
    "DOP": Decimal("60.500000"),
    "PYG": Decimal("7450.000000"),
    "USD": Decimal("1.000000"),
    "USDC": Decimal("1.000000"),
    "USDT": Decimal("1.000000"),
}


@dataclass(frozen=True)
class FeeProfile:
    """Platform fees of a rail: fixed (base currency), percentage and FX markup (fractions)."""

    fixed_fee: Decimal
    percentage_fee: Decimal
    fx_markup: Decimal


def _p(fixed: str, pct: str, fx: str) -> FeeProfile:
    return FeeProfile(Decimal(fixed), Decimal(pct), Decimal(fx))


FEES: dict[tuple[str, str], FeeProfile] = {
    ("MXN", "SPEI"): _p("1.00", "0.005", "0.003"),
    ("COP", "PSE"): _p("1.50", "0.006", "0.004"),
    ("COP", "WALLET"): _p("0.50", "0.008", "0.004"),
    ("ARS", "ARS"): _p("2.00", "0.010", "0.006"),
    ("BRL", "BRL"): _p("1.00", "0.005", "0.003"),
    ("CLP", "CLP"): _p("1.50", "0.006", "0.004"),
    ("PEN", "PEN"): _p("1.50", "0.006", "0.004"),
    ("UYU", "UYU"): _p("2.00", "0.008", "0.005"),
    ("GTQ", "GTQ"): _p("2.00", "0.008", "0.005"),
    ("CRC", "CRC"): _p("2.00", "0.008", "0.005"),
    ("DOP", "DOP"): _p("2.00", "0.008", "0.005"),
    ("PYG", "PYG"): _p("2.00", "0.008", "0.005"),
    ("USD", "ACH"): _p("0.50", "0.001", "0"),
    ("USD", "WIRE"): _p("15.00", "0.001", "0"),
    ("USD", "SWIFT"): _p("25.00", "0.002", "0"),
    ("USD", "PEUSD"): _p("5.00", "0.004", "0"),
    ("USD", "ECUSD"): _p("5.00", "0.004", "0"),
    ("USD", "PAUSD"): _p("5.00", "0.004", "0"),
    ("USD", "SVUSD"): _p("5.00", "0.004", "0"),
    ("USDC", "WALLET"): _p("0.00", "0.001", "0"),
    ("USDT", "WALLET"): _p("0.00", "0.001", "0"),
}

# Pairs that are not enabled although each currency is valid: a stablecoin cannot be quoted into
# a stablecoin, and COP wallets take only stablecoin funding.
DISABLED_PAIRS: frozenset[tuple[str, str, str]] = frozenset(
    {
        ("USDC", "USDC", "WALLET"),
        ("USDC", "USDT", "WALLET"),
        ("USDT", "USDC", "WALLET"),
        ("USDT", "USDT", "WALLET"),
        ("USD", "COP", "WALLET"),
    }
)


def pair_enabled(base_currency: str, quote_currency: str, account_type: str) -> bool:
    return (base_currency, quote_currency, account_type) not in DISABLED_PAIRS
