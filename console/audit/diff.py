"""Before and after of an audit entry as rows a person reads: what changed, what was added or
removed, and what stayed the same (shown folded)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Literal

from django.utils.text import capfirst
from django.utils.translation import gettext_lazy

from staff.audit_actions import audited_model

Change = Literal["changed", "added", "removed", "same"]


# What the page says of each row's change.
CHANGE_WORDS = {
    "changed": gettext_lazy("changed"),
    "added": gettext_lazy("added"),
    "removed": gettext_lazy("removed"),
    "same": gettext_lazy("unchanged"),
}


@dataclass(frozen=True)
class DiffRow:
    key: str
    change: Change
    before: str  # the value as JSON text; "" when absent
    after: str
    # What a person reads: the field's name and its values' labels in the active language,
    # where the audited record's model names them (`readable`); the key and values otherwise.
    label: str = ""
    before_text: str = ""
    after_text: str = ""

    @property
    def change_label(self) -> str:
        return str(CHANGE_WORDS[self.change])

    @property
    def is_change(self) -> bool:
        return self.change != "same"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def diff_rows(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[DiffRow]:
    """One row per key of either side, in key order: changed, added, removed or the same."""
    old, new = before or {}, after or {}
    rows = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            rows.append(DiffRow(key, "added", "", _text(new[key])))
        elif key not in new:
            rows.append(DiffRow(key, "removed", _text(old[key]), ""))
        else:
            change: Change = "same" if old[key] == new[key] else "changed"
            rows.append(DiffRow(key, change, _text(old[key]), _text(new[key])))
    return rows


def _side(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    return {"value": value}  # a list or a scalar (e.g. the groups a person held)


def before_after(entry: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The entry's before and after: its own fields, or (entries written before they existed, and
    services that still keep them there) `details["before"]` and `details["after"]`."""
    before, after = entry.before, entry.after
    if before is None and after is None and isinstance(entry.details, dict):
        before, after = entry.details.get("before"), entry.details.get("after")
    return _side(before), _side(after)


def changed_keys(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    return [row.key for row in diff_rows(before, after) if row.is_change]


def readable(rows: list[DiffRow], target_type: str) -> list[DiffRow]:
    """The rows with the audited model's field names (its verbose names) and, for a field with
    choices, the choices' labels in place of their codes (`pending_approval` -> "Pending
    approval"). The model is the entry's own record type, read from Django's app registry."""
    model = audited_model(target_type)
    fields = {field.name: field for field in model._meta.get_fields()} if model else {}
    out = []
    for row in rows:
        field = fields.get(row.key)
        label = capfirst(str(getattr(field, "verbose_name", "") or row.key.replace("_", " ")))
        choices = dict(getattr(field, "flatchoices", None) or [])
        out.append(
            replace(
                row,
                label=label,
                before_text=str(choices.get(row.before, row.before)),
                after_text=str(choices.get(row.after, row.after)),
            )
        )
    return out
