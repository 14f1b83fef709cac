"""What a person reads for an audit entry's action: each app's labels for its own actions.

The action stays a code (`payout.approved`) in the entry, the CSV and the API; the audit pages
show its label, translated. The app that writes an action declares its label where it lives,
from its AppConfig.ready(), as it declares its kinds of admin change (staff.changes):

    register_audit_actions({"payout.approved": gettext_lazy("Payout approved")})

A family of actions named at run time (an upstream event's type) registers its prefix, ending in
".": `{"end_user.event.": gettext_lazy("End user: upstream event")}`; the longest prefix wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

AUDIT_ACTIONS: dict[str, StrOrPromise] = {}


def register_audit_actions(labels: Mapping[str, StrOrPromise]) -> None:
    """Declare the labels of an app's audit actions (from its ready(); once per action)."""
    for action, label in labels.items():
        existing = AUDIT_ACTIONS.get(action)
        if existing is not None and existing != label:
            raise ImproperlyConfigured(f"The audit action {action!r} already has a label.")
        AUDIT_ACTIONS[action] = label


def audit_action_label(action: str) -> str:
    """The action in the active language; the code itself when no app declared it."""
    label = AUDIT_ACTIONS.get(action)
    if label is None:
        prefixes = [key for key in AUDIT_ACTIONS if key.endswith(".") and action.startswith(key)]
        if not prefixes:
            return action
        label = AUDIT_ACTIONS[max(prefixes, key=len)]
    return str(label)


def audited_model(target_type: str) -> type[models.Model] | None:
    """The model an audit entry's `target_type` (`payouts.payout`, its label as stored) names,
    or None for a model gone. Read from every installed model, so no app is named by a string:
    the label is data the entry carries, for pages that show its fields' names."""
    return _models_by_label().get(target_type)


@cache
def _models_by_label() -> dict[str, type[models.Model]]:
    return {model._meta.label_lower: model for model in apps.get_models()}
