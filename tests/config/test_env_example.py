""".env.example lists every environment variable the settings read (and nothing they don't)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# env("X"), env.int("X"), env.list(\n "X" ...): the first string argument of an env reader.
READ = re.compile(r"\benv(?:\.[a-z_]+)?\(\s*\"([A-Z][A-Z0-9_]*)\"")
LISTED = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=", re.MULTILINE)
# Read by Django and our entry points rather than by the settings modules.
OUTSIDE_SETTINGS = {"DJANGO_SETTINGS_MODULE"}


def _read_by_settings() -> set[str]:
    names: set[str] = set()
    for module in (ROOT / "config" / "settings").glob("*.py"):
        names |= set(READ.findall(module.read_text()))
    return names


def test_every_variable_the_settings_read_is_in_env_example() -> None:
    listed = set(LISTED.findall((ROOT / ".env.example").read_text()))

    assert _read_by_settings() - listed == set()


def test_env_example_lists_no_variable_that_nothing_reads() -> None:
    listed = set(LISTED.findall((ROOT / ".env.example").read_text()))

    assert listed - _read_by_settings() - OUTSIDE_SETTINGS == set()


def test_the_scan_finds_the_settings_it_must() -> None:
    # Guards the regular expression: these are read in three different styles.
    assert {"DATABASE_URL", "PAYOPS_ENCRYPTION_KEYS", "GATEWAY_READ_TIMEOUT"} <= _read_by_settings()
