"""Steps of `manage.py payops_bootstrap`: staff's roles and demo logins, then what other apps add.

How to add a step from another app: in its AppConfig.ready(),

    from console.bootstrap import register_step
    register_step("gateway.sandbox", create_sandbox_environment)

A step is a callable taking no arguments and returning one line saying what it did (or did not
do, and why). Steps run in registration order (staff's roles and demo staff first: the console
registers them in its own ready(), and it comes before the apps that build on it in
INSTALLED_APPS), each must be idempotent, and each decides for itself whether it applies in the
current settings (e.g. local only). Registering a name twice replaces the step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class BootstrapStep:
    name: str
    run: Callable[[], str]


BOOTSTRAP_STEPS: list[BootstrapStep] = []


def register_step(name: str, run: Callable[[], str]) -> None:
    """Add (or replace, by name) a bootstrap step; call it from an AppConfig.ready()."""
    for index, step in enumerate(BOOTSTRAP_STEPS):
        if step.name == name:
            BOOTSTRAP_STEPS[index] = BootstrapStep(name, run)
            return
    BOOTSTRAP_STEPS.append(BootstrapStep(name, run))
