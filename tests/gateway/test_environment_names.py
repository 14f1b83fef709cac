"""Short environment names at the shell: exact, any case, slug, word or prefix; clear refusals."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from gateway.environment_names import environment_by_short_name
from gateway.models import Environment, EnvironmentKind
from staff.errors import ServiceError

pytestmark = pytest.mark.django_db


def _environment(name: str, kind: str = EnvironmentKind.SANDBOX) -> Environment:
    return Environment.objects.create(name=name, kind=kind, base_url="https://upstream.invalid")


@pytest.fixture
def three() -> dict[str, Environment]:
    return {
        "sandbox": _environment("Emulator sandbox"),
        "production": _environment("Production", EnvironmentKind.PRODUCTION),
        "staging": _environment("Partner staging"),
    }


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Emulator sandbox", "sandbox"),  # exact
        ("emulator SANDBOX", "sandbox"),  # any case
        ("emulator-sandbox", "sandbox"),  # slug
        ("Emulator_Sandbox", "sandbox"),
        ("sandbox", "sandbox"),  # a word
        ("SAND", "sandbox"),  # a prefix of a word
        ("emul", "sandbox"),  # a prefix of the name
        ("prod", "production"),
        ("  production ", "production"),
        ("staging", "staging"),
    ],
)
def test_a_short_name_finds_the_one_environment(three, typed: str, expected: str) -> None:
    assert environment_by_short_name(typed) == three[expected]


def test_an_exact_name_wins_over_a_longer_name_it_is_a_word_of() -> None:
    plain = _environment("Sandbox")
    _environment("Emulator sandbox")

    assert environment_by_short_name("sandbox") == plain


def test_an_ambiguous_name_lists_the_candidates(three) -> None:
    _environment("Sandbox EU")

    with pytest.raises(ServiceError) as refused:
        environment_by_short_name("sand")

    assert refused.value.code == "environment_ambiguous"
    assert "'Emulator sandbox'" in refused.value.message
    assert "'Sandbox EU'" in refused.value.message
    assert "Production" not in refused.value.message
    assert [e.field for e in refused.value.errors] == ["environment"]


def test_an_unknown_name_lists_every_environment(three) -> None:
    with pytest.raises(ServiceError) as refused:
        environment_by_short_name("moon")

    assert refused.value.code == "environment_unknown"
    assert refused.value.status == 404
    for name in ("Emulator sandbox", "Partner staging", "Production"):
        assert repr(name) in refused.value.message


def test_punctuation_alone_names_nothing(three) -> None:
    with pytest.raises(ServiceError):
        environment_by_short_name("--")


def test_the_webhooks_command_takes_a_short_name_and_refuses_clearly(three) -> None:
    with pytest.raises(CommandError, match="has no webhook endpoint registered"):
        call_command("webhooks", "show", "--environment", "SANDBOX", stdout=StringIO())
    with pytest.raises(CommandError, match="No environment is named 'moon'"):
        call_command("webhooks", "show", "--environment", "moon", stdout=StringIO())
    _environment("Sandbox EU")
    with pytest.raises(CommandError, match="names more than one environment"):
        call_command("webhooks", "reprocess", "--environment", "sand", stdout=StringIO())
    out = StringIO()
    call_command("webhooks", "reprocess", "--environment", "prod", stdout=out)
    assert "No event matches." in out.getvalue()
