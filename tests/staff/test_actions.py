"""staff.actions.act: an action locks, records before and after, audits, announces on commit."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from staff import actions
from staff.actions import NoAnnouncer, act, record_action, register_announcer
from staff.models import AuditEntry, StaffUser

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard(django_capture_on_commit_callbacks: Any) -> Iterator[list[Any]]:
    """StaffUser gets an announcer for the test that queues what it hears on commit."""
    from django.db import transaction

    messages: list[Any] = []

    def announce(record: Any) -> None:
        transaction.on_commit(lambda: messages.append((record.pk, record.language)))

    register_announcer(StaffUser, announce)
    try:
        yield messages
    finally:
        del actions._ANNOUNCERS[StaffUser]


def test_an_action_records_before_and_after_and_announces_once_committed(
    heard: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    person = StaffUser.objects.create_user("p@payops.local", "x", language="en")
    with (
        django_capture_on_commit_callbacks(execute=True),
        act(actor=person, action="staff.language_set", target=person, fields=["language"]) as a,
    ):
        assert a.target is not person  # the row read again under its lock
        a.target.language = "es"
        a.target.save(update_fields=["language"])
        a.details["why"] = "reads Spanish"
        assert heard == []
    entry = AuditEntry.objects.get(action="staff.language_set")
    assert (entry.before, entry.after) == ({"language": "en"}, {"language": "es"})
    assert entry.details == {"why": "reads Spanish"}
    assert entry.target_id == str(person.pk)
    assert heard == [(person.pk, "es")]


def test_a_refused_action_leaves_no_entry_no_change_and_no_message(
    heard: list[Any], django_capture_on_commit_callbacks: Any
) -> None:
    person = StaffUser.objects.create_user("p@payops.local", "x", language="en")
    language = act(actor=None, action="staff.language_set", target=person, fields=["language"])
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        language as a,
    ):
        a.target.language = "es"
        a.target.save(update_fields=["language"])
        raise RuntimeError("refused half-way")
    person.refresh_from_db()
    assert person.language == "en"
    assert not AuditEntry.objects.filter(action="staff.language_set").exists()
    assert heard == []


def test_an_action_that_finds_nothing_to_change_writes_nothing(heard: list[Any]) -> None:
    person = StaffUser.objects.create_user("p@payops.local", "x")
    with act(actor=None, action="staff.language_set", target=person) as a:
        a.nothing_changed()
    assert not AuditEntry.objects.exists()


def test_a_creation_has_an_empty_before() -> None:
    with act(actor=None, action="staff.created", fields=["email"], announce=False) as a:
        a.target = StaffUser.objects.create_user("new@payops.local", "x")
    entry = AuditEntry.objects.get(action="staff.created")
    assert (entry.before, entry.after) == ({}, {"email": "new@payops.local"})


def test_a_record_without_a_live_message_must_say_so() -> None:
    person = StaffUser.objects.create_user("p@payops.local", "x")
    with pytest.raises(NoAnnouncer), act(actor=None, action="staff.touched", target=person):
        pass
    assert not AuditEntry.objects.exists()  # the whole action rolled back
    record_action(actor=None, action="staff.touched", target=person, announce=False)
    assert AuditEntry.objects.filter(action="staff.touched").count() == 1


def test_a_model_has_one_announcer() -> None:
    register_announcer(StaffUser, print)
    try:
        with pytest.raises(ValueError, match="already has an announcer"):
            register_announcer(StaffUser, lambda record: None)
    finally:
        del actions._ANNOUNCERS[StaffUser]


@pytest.mark.postgres
def test_the_target_row_is_locked() -> None:
    person = StaffUser.objects.create_user("p@payops.local", "x")
    touch = act(actor=None, action="staff.touched", target=person, announce=False)
    with CaptureQueriesContext(connection) as queries, touch:
        pass
    assert any("FOR UPDATE" in query["sql"] for query in queries.captured_queries)


# --- the ratchet: every write goes through the action helper ---------------------------------

# Product modules that still call audit_record themselves: none any more (issue 31 moved every
# app onto staff.actions). A new caller fails the test below; keep it empty.
NOT_YET_ON_ACTIONS: frozenset[str] = frozenset()
# The helper itself, and the audit trail's writer it calls (staff/audit.py defines audit_record).
HOME = {"staff/actions.py", "staff/audit.py"}
SKIP_DIRS = {"node_modules", "tests", "migrations", "bench", "docs", "var", "static", "__pycache__"}


@cache
def _callers_of_audit_record() -> frozenset[str]:
    root = Path(settings.BASE_DIR)
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in SKIP_DIRS and not name.startswith(".")]
        for name in files:
            if not name.endswith(".py"):
                continue
            path = Path(folder, name)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    called = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                    if called == "audit_record":
                        found.add(path.relative_to(root).as_posix())
    return frozenset(found - HOME)


def test_no_new_module_writes_audit_entries_around_the_action_helper() -> None:
    new = _callers_of_audit_record() - NOT_YET_ON_ACTIONS
    assert not new, f"call staff.actions.act/record_action instead of audit_record in {sorted(new)}"


def test_the_list_of_modules_not_yet_moved_only_shrinks() -> None:
    moved = NOT_YET_ON_ACTIONS - _callers_of_audit_record()
    assert not moved, f"these no longer call audit_record: remove them from the list: {moved}"
