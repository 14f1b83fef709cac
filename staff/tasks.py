"""Staff's background work (schedules are registered by console, which may import staff)."""

from __future__ import annotations

from staff.changes import changes_apply_due


def admin_changes_apply_due() -> int:
    """Apply the admin changes whose single-admin wait has ended (staff.changes)."""
    return changes_apply_due()
