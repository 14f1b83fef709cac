"""The registry of alert conditions: one module per kind, each calling `register_condition`.

A condition reads the state the other apps already keep (their own selectors: nothing is
re-derived here) and answers the subjects it is true of right now, each with a one-line summary
as a message and its parameters (alerts.summaries), translated when read, not when evaluated:
`{"payout:42": summary(gettext_noop("Payout %(id)s has been submitting for %(minutes)s min"),
id=42, minutes=17)}`. The evaluator
(alerts.services.alerts_evaluate) opens an alert for each new subject, keeps it while the subject
stays, and resolves it when the subject is gone. A kind whose condition never clears by itself
(a failed payout stays failed) is `resolved_by_acknowledgement`: its alert resolves when a person
acknowledges it, and the same subject never fires again for that rule.

How to add a kind: a module here with a function `(rule, now) -> dict[str, Summary]`, registered
with its thresholds, imported from `alerts.apps`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _

from console.sentences import Summary
from staff.errors import ServiceError

if TYPE_CHECKING:
    from alerts.models import AlertRule

Subjects = dict[str, Summary]
Evaluate = Callable[["AlertRule", datetime], Subjects]


@dataclass(frozen=True)
class Threshold:
    """One whole-number threshold of a kind: its bounds and default."""

    name: str
    label: str | Promise
    default: int
    minimum: int
    maximum: int


@dataclass(frozen=True)
class Condition:
    kind: str
    label: str | Promise
    description: str | Promise
    evaluate: Evaluate
    thresholds: tuple[Threshold, ...] = ()
    resolved_by_acknowledgement: bool = False
    # Sign-in failures belong to no upstream environment.
    per_environment: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)

    def validate(self, raw: Mapping[str, Any]) -> dict[str, int]:
        """The thresholds `raw` gives, whole numbers within bounds, defaults for the missing;
        unknown names and bad values are refused (ServiceError with one error per field)."""
        known = {t.name: t for t in self.thresholds}
        errors = [(f"thresholds.{name}", _("is not a threshold of this kind")) for name in raw]
        errors = [e for e in errors if e[0].split(".", 1)[1] not in known]
        values: dict[str, int] = {}
        for threshold in self.thresholds:
            value = raw.get(threshold.name, threshold.default)
            if isinstance(value, str) and value.strip().isdigit():
                value = int(value.strip())
            if isinstance(value, bool) or not isinstance(value, int):
                errors.append((f"thresholds.{threshold.name}", _("must be a whole number")))
                continue
            if not threshold.minimum <= value <= threshold.maximum:
                errors.append(
                    (
                        f"thresholds.{threshold.name}",
                        _("must be between %(minimum)s and %(maximum)s")
                        % {"minimum": threshold.minimum, "maximum": threshold.maximum},
                    )
                )
                continue
            values[threshold.name] = value
        if errors:
            raise ServiceError(_("These thresholds are not valid for this kind."), errors=errors)
        return values


CONDITIONS: dict[str, Condition] = {}


def register_condition(
    kind: str,
    evaluate: Evaluate,
    *,
    label: str | Promise,
    description: str | Promise,
    thresholds: tuple[Threshold, ...] = (),
    resolved_by_acknowledgement: bool = False,
    per_environment: bool = True,
) -> None:
    """Declare a kind of rule (registering a kind twice replaces it)."""
    CONDITIONS[kind] = Condition(
        kind=kind,
        label=label,
        description=description,
        evaluate=evaluate,
        thresholds=thresholds,
        resolved_by_acknowledgement=resolved_by_acknowledgement,
        per_environment=per_environment,
    )


def condition_get(kind: str) -> Condition:
    condition = CONDITIONS.get(kind)
    if condition is None:
        raise ServiceError(
            _("Unknown kind of alert rule."), errors=[("kind", _("is not a known kind of rule"))]
        )
    return condition


def kind_choices() -> list[tuple[str, str]]:
    return [(c.kind, str(c.label)) for c in CONDITIONS.values()]


def threshold_value(rule: AlertRule, name: str) -> int:
    """The rule's threshold `name`, or the kind's default."""
    condition = condition_get(rule.kind)
    default = next(t.default for t in condition.thresholds if t.name == name)
    value = rule.thresholds.get(name, default)
    return int(value)
