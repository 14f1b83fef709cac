""".env.example lists every environment variable the settings read (and nothing they don't)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# env("X"), env.int("X"), env.list(\n "X" ...), _required("X") (production's must-haves): the first
# string argument of an env reader.
READ = re.compile(r"\b(?:env(?:\.[a-z_]+)?|_required)\(\s*\"([A-Z][A-Z0-9_]*)\"")
LISTED = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=", re.MULTILINE)
# Read by Django and our entry points rather than by the settings modules.
# PROMETHEUS_MULTIPROC_DIR is read by prometheus-client itself (and console.metrics) in every
# process, so that /metrics sums them all. The OTEL_* variables are read by the OpenTelemetry SDK
# (and console.tracing) when PAYOPS_OTEL_ENABLED is on.
OUTSIDE_SETTINGS = {
    "DJANGO_SETTINGS_MODULE",
    "PROMETHEUS_MULTIPROC_DIR",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_SERVICE_NAME",
}


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


# env.float("X", default=0.05): a literal default (numbers, booleans, strings) to state.
DEFAULT = re.compile(
    r"\benv(?:\.[a-z_]+)?\(\s*\"([A-Z][A-Z0-9_]*)\",\s*default=(-?[0-9][0-9_.]*|True|False|\"[^\"]*\")\s*\)"
)
EXAMPLE_VALUE = re.compile(r"^#?\s*([A-Z][A-Z0-9_]*)=(\S*)", re.MULTILINE)


def _same(setting: str, example: str) -> bool:
    if setting in ("True", "False"):
        return example.lower() == setting.lower()
    if setting.startswith('"'):
        return example == setting.strip('"')
    try:
        return float(setting.replace("_", "")) == float(example.replace(",", ""))
    except ValueError:
        return False


def test_env_example_states_the_settings_defaults() -> None:
    found: dict[str, set[str]] = {}
    for module in (ROOT / "config" / "settings").glob("*.py"):
        for name, value in DEFAULT.findall(module.read_text()):
            found.setdefault(name, set()).add(value)
    # Compared where the settings agree on one default that is a value: an empty default means
    # "unset" (the example then shows a sample such as a URL), and a default that differs by
    # settings module (DJANGO_DEBUG) has no single value to state.
    defaults = {name: values.pop() for name, values in found.items() if len(values) == 1}
    defaults = {name: value for name, value in defaults.items() if value != '""'}
    example = dict(EXAMPLE_VALUE.findall((ROOT / ".env.example").read_text()))
    # An empty example value means "unset" (a secret, a host): nothing to compare.
    stated = {name: value for name, value in example.items() if value and name in defaults}
    assert {"GATEWAY_LEASE_LINGER", "GATEWAY_RATE_WINDOW_MARGIN"} <= stated.keys()
    differing = {
        name: (defaults[name], value)
        for name, value in stated.items()
        if not _same(defaults[name], value)
    }
    assert differing == {}
