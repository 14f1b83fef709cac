"""An environment from the short name a person types: `sandbox` for "Emulator sandbox".

Operators name environments at the shell (`manage.py webhooks show --environment sandbox`). The
stored name is what an admin typed ("Emulator sandbox"); a newcomer types a word of it. One
resolver, so every command that takes `--environment` accepts the same spellings and refuses
the same way: case does not matter, and the first rule that finds anything decides.

1. The whole name ("emulator sandbox").
2. Its slug ("emulator-sandbox", also "emulator_sandbox" or "Emulator-Sandbox").
3. A prefix of the name, or a word of it, or a prefix of a word ("emul", "sandbox", "sand").

A rule that finds more than one is ambiguous and names them; none finding any names them all.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.text import slugify
from django.utils.translation import gettext

from gateway.models import Environment
from staff.errors import ServiceError


def _words(slug: str) -> list[str]:
    return [word for word in slug.split("-") if word]


def _matches(environments: Iterable[Environment], typed: str) -> list[Environment]:
    """The environments the first matching rule finds (empty when none does)."""
    candidates = list(environments)
    wanted = typed.strip().casefold()
    exact = [e for e in candidates if e.name.casefold() == wanted]
    if exact:
        return exact
    slug = slugify(typed.replace("_", "-"))
    if not slug:
        return []
    by_slug = [e for e in candidates if slugify(e.name) == slug]
    if by_slug:
        return by_slug
    return [
        e
        for e in candidates
        if slugify(e.name).startswith(slug)
        or any(word.startswith(slug) for word in _words(slugify(e.name)))
    ]


def _listed(environments: Iterable[Environment]) -> str:
    return ", ".join(repr(e.name) for e in environments) or "none exists yet"


def environment_by_short_name(typed: str) -> Environment:
    """
    The one environment `typed` names (see the module's rules), or a ServiceError on the field
    `environment` that lists the choices: `environment_ambiguous` or `environment_unknown`.
    """
    environments = list(Environment.objects.order_by("name"))
    found = _matches(environments, typed)
    if len(found) == 1:
        return found[0]
    if found:
        raise ServiceError(
            f"{typed!r} names more than one environment: {_listed(found)}. Type more of the name.",
            code="environment_ambiguous",
            errors=[("environment", gettext("is ambiguous"))],
        )
    raise ServiceError(
        gettext("No environment is named %(typed)r. Environments: %(environments)s.")
        % {"typed": typed, "environments": _listed(environments)},
        code="environment_unknown",
        errors=[("environment", gettext("names no environment"))],
        status=404,
    )
