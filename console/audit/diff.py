"""Before and after of an audit entry as rows a person reads: what changed, what was added or
removed, and what stayed the same (shown folded)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Change = Literal["changed", "added", "removed", "same"]


@dataclass(frozen=True)
class DiffRow:
    key: str
    change: Change
    before: str  # the value as JSON text; "" when absent
    after: str

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


def changed_keys(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    return [row.key for row in diff_rows(before, after) if row.is_change]
