"""People read words, not codes (issue 30, item 6): every page each role can reach, in Spanish
and Brazilian Portuguese, over seeded records that carry the codes people used to see (audit
actions, a payout waiting with its notification, an upstream report not applied, an applied
admin change, the system's default alert rules, an upstream status in capitals). No visible
text holds a machine code (a snake_case word, a dotted action name, an upstream status in
capitals), a known English phrase, or an amount written the English way (`100.00 USD`).

Codes a person may need verbatim are shown as code (`<code>`, `<pre>`: an event id, a hash, an
entry's raw details) and are not read here, except the audit actions, which are never shown
as codes. The walk is tests/i18n/test_pages.py's (tests/staff/test_auditor.py's URL names).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from alerts.bootstrap import default_rules_create
from payouts.models import ChangeSource, PayoutEvent, PayoutStatus
from payouts.states import payout_transition
from staff.audit import audit_record
from staff.audit_actions import AUDIT_ACTIONS
from staff.models import ChangeProposal, StaffUser
from tests.i18n.test_pages import VISIBLE_ATTRIBUTES, _pages
from tests.identity import client_signed_in
from tests.staff.test_auditor import world  # noqa: F401  (a draft payout and its records)

pytestmark = pytest.mark.django_db

SNAKE_CASE = re.compile(r"\b[a-z]{2,}(?:_[a-z]{2,})+\b")
DOTTED = re.compile(r"\b[a-z_]{2,}\.[a-z_]{2,}(?:\.[a-z_]+)*\b")
UPSTREAM_CAPITALS = re.compile(
    r"\b(?:" + "|".join(s.upper() for s in PayoutStatus.values if s.upper() != s) + r")\b"
)
ENGLISH_AMOUNT = re.compile(r"\b\d{1,3}(?:,\d{3})*\.\d{2} [A-Z]{3}\b|\b\d{4,}\.\d{2} [A-Z]{3}\b")
# Emails, addresses and file names are not codes a person is made to read as words.
NOT_WORDS = re.compile(r"\S+@\S+|\w+://\S+|/\S*|\S+\.(?:local|test|example|com|csv|pdf|json|py)\b")
# The approval policy's rule language (its form's help): words a person types, shown as typed.
TYPED_ON = {
    "payouts:approval_policy": {
        "finance_approver",
        "finance_maker",
        "maker_roles",
        "recipient_under_days",
    }
}
# English the tour found on Spanish and Portuguese pages (issue 30).
KNOWN_ENGLISH = (
    "waits for approval",
    "reported, not applied",
    "already in this state",
    "Fiat account",
    "Crypto account",
    "yyyy-mm-dd",
    "(reachable)",
    "saved.",
    "Payout failed",
)


class _ReadText(HTMLParser):
    """Visible text and the attributes a person reads, leaving out scripts and code."""

    HIDDEN = ("script", "style", "template", "code", "pre")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.codes: list[str] = []
        self._hidden: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self._hidden.append(tag)
        for name, value in attrs:
            if name in VISIBLE_ATTRIBUTES and value:
                self.texts.append(" ".join(value.split()))

    def handle_endtag(self, tag: str) -> None:
        if self._hidden and self._hidden[-1] == tag:
            self._hidden.pop()

    def handle_data(self, data: str) -> None:
        text = " ".join(data.split())
        if text:
            (self.codes if self._hidden else self.texts).append(text)


def codes_in(page: str) -> set[str]:
    """What a person reads on `page` that is a code, English, or an English amount."""
    parser = _ReadText()
    parser.feed(page)
    parser.close()
    found: set[str] = set()
    for text in parser.texts:
        words = NOT_WORDS.sub(" ", text)
        for pattern in (SNAKE_CASE, DOTTED, UPSTREAM_CAPITALS, ENGLISH_AMOUNT):
            found.update(pattern.findall(words))
        found.update(phrase for phrase in KNOWN_ENGLISH if phrase in text)
    actions = {action for action in AUDIT_ACTIONS if not action.endswith(".")}
    found.update(code for code in parser.codes if code in actions)
    return found


@pytest.fixture
def coded(
    world: dict[str, Any],  # noqa: F811
    demo_staff: dict[str, StaffUser],
    django_capture_on_commit_callbacks: Any,
) -> dict[str, Any]:
    """Records whose codes people used to read: see the module's docstring."""
    payout = world["payout"]
    with django_capture_on_commit_callbacks(execute=True):  # its notification to the approvers
        payout_transition(
            payout, PayoutStatus.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker
        )
    approver = demo_staff["finance_approver"]
    for action in ("payout.approved", "payout.rejected"):
        audit_record(
            actor=approver,
            action=action,
            target=payout,
            before={"status": "pending_approval"},
            after={"status": action.split(".")[1]},
        )
    payout.upstream_status = "COMPLETED"
    payout.save(update_fields=["upstream_status"])
    PayoutEvent.objects.create(
        environment=world["environment"],
        payout=payout,
        upstream_id="up-1",
        event_id="evt-1",
        event_type="payout.created",
        source=ChangeSource.EVENT,
        status=PayoutStatus.CREATED,
        note="not applied: pending_approval cannot become created (late or out of order)",
        occurred_at=timezone.now(),
    )
    ChangeProposal.objects.create(
        kind="environment.credentials",
        target_type="gateway.environment",
        target_id=str(world["environment"].pk),
        target_label=world["environment"].name,
        summary="Change verification email of the environment Sandbox",
        before={"verification_email": "old@example.test"},
        after={"verification_email": "new@example.test"},
        state=ChangeProposal.State.APPLIED,
        proposed_by=demo_staff["admin"],
    )
    default_rules_create()
    world["entry"] = audit_record(
        actor=approver,
        action="payout.approved",
        target=payout,
        before={"status": "pending_approval"},
        after={"status": "approved"},
    )
    return world


def _walk(client: Client, pages: dict[str, str]) -> tuple[int, dict[str, list[str]]]:
    shown, found = 0, {}
    for name, url in pages.items():
        response = client.get(url)
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        shown += 1
        for code in codes_in(response.content.decode()) - TYPED_ON.get(name, set()):
            found.setdefault(code, []).append(name)
    return shown, found


@pytest.mark.parametrize("language", ["es", "pt-br"])
def test_every_role_reads_words_not_codes(
    language: str, demo_staff: dict[str, StaffUser], coded: dict[str, Any]
) -> None:
    pages = _pages(coded)
    found: dict[str, list[str]] = {}
    for role, person in sorted(demo_staff.items()):
        person.language = language
        person.save(update_fields=["language"])
        shown, codes = _walk(client_signed_in(person), pages)
        assert shown > 5, (role, "the walk reached too few pages")
        for code, names in codes.items():
            found.setdefault(code, []).extend(f"{role}:{name}" for name in names)
    assert found == {}, (
        f"{len(found)} codes or English texts on the {language} pages:\n"
        + "\n".join(
            f"  {code!r} on {', '.join(sorted(set(names))[:5])}"
            for code, names in sorted(found.items())
        )
    )


def test_the_check_finds_each_kind_of_code() -> None:
    page = (
        "<p>pending_approval</p><p>payout.approved</p><p>COMPLETED</p><p>100.00 USD</p>"
        '<input placeholder="yyyy-mm-dd"><code>payout.rejected</code>'
        "<code>evt_abc</code><p>admin@payops.local /payouts/1/ 1.234,56 USD</p>"
    )
    assert codes_in(page) == {
        "pending_approval",
        "payout.approved",
        "COMPLETED",
        "100.00 USD",
        "yyyy-mm-dd",
        "payout.rejected",
    }
