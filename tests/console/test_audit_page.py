"""The audit trail page, its CSV export and its API (issue 20 item 4): filters by person, object,
action, time and words; before/after as a diff; a constant number of queries per page; the
chain's verification named on the page and in the API; per-role permissions."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from staff.api_tokens import api_token_create
from staff.audit import audit_record
from staff.models import AuditEntry, StaffUser
from staff.redaction import REDACTED
from staff.roles import ROLES, TOKEN_SCOPES
from tests.identity import client_signed_in, token_with_scopes

pytestmark = pytest.mark.django_db


@pytest.fixture
def trail(demo_staff: dict[str, StaffUser]) -> dict[str, Any]:
    admin, maker = demo_staff["admin"], demo_staff["finance_maker"]
    changed = audit_record(
        actor=admin,
        action="gateway.environment_updated",
        target=maker,
        details={"name": "Sandbox", "note": '=HYPERLINK("http://evil")'},
        before={"base_url": "https://old.example", "rate": 5, "client_secret": "s1"},
        after={"base_url": "https://new.example", "rate": 5, "client_secret": "s2"},
    )
    approved = audit_record(actor=maker, action="payout.approved", target=admin, details={})
    system = audit_record(actor=None, action="quotes.expired", details={"count": 3})
    ten_days_ago = timezone.now() - timedelta(days=10)
    with mock.patch("staff.audit.timezone.now", return_value=ten_days_ago):  # the clock only
        old = audit_record(actor=admin, action="role.granted", details={"role": "compliance"})
    return {"changed": changed, "approved": approved, "system": system, "old": old}


def _ids(response: Any) -> set[int]:
    """The fixture's entries on the page (sign-ins and seeding write entries of their own)."""
    ours = set(AuditEntry.objects.filter(action__in=OURS).values_list("pk", flat=True))
    return {entry.pk for entry in response.context["page"].object_list} & ours


OURS = ("gateway.environment_updated", "payout.approved", "quotes.expired", "role.granted")


def test_filters_by_person_object_action_time_and_words(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    admin = demo_staff["admin"]
    maker = demo_staff["finance_maker"]
    everyone = _ids(client.get("/audit/"))
    assert {e.pk for e in trail.values()} <= everyone
    assert _ids(client.get("/audit/", {"person": admin.pk})) == {
        trail["changed"].pk,
        trail["old"].pk,
    }
    assert _ids(client.get("/audit/", {"person": "system"})) == {trail["system"].pk}
    by_object = client.get("/audit/", {"target_type": "staff.staffuser", "target_id": maker.pk})
    assert _ids(by_object) == {trail["changed"].pk}
    assert _ids(client.get("/audit/", {"action": "payout."})) == {trail["approved"].pk}
    today = timezone.localdate().isoformat()
    recent = _ids(client.get("/audit/", {"since": today}))
    assert trail["old"].pk not in recent and trail["changed"].pk in recent
    assert _ids(client.get("/audit/", {"text": "new.example"})) == {trail["changed"].pk}
    assert _ids(client.get("/audit/", {"text": "compliance"})) == {trail["old"].pk}


def test_the_list_names_the_changed_keys(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    html = client.get("/audit/", {"action": "gateway."}).content.decode()
    row = html.split(f'data-entry="{trail["changed"].pk}"', 1)[1].split("</tr>", 1)[0]
    assert ">base_url</a>" in row


def test_oldest_first_sorts_by_time(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    rows = client.get("/audit/", {"sort": "oldest"}).context["page"].object_list
    assert next(e.pk for e in rows if e.action in OURS) == trail["old"].pk
    rows = client.get("/audit/").context["page"].object_list
    assert [e.pk for e in rows if e.action in OURS][-1] == trail["old"].pk


def test_a_bad_filter_is_shown_on_its_field_not_a_500(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    response = client.get("/audit/", {"since": "26/11/2026", "person": "nobody", "text": "a\x00"})
    assert response.status_code == 200
    form = response.context["form"]
    assert {"since", "person", "text"} <= set(form.errors)


def test_the_detail_shows_changed_keys_and_folds_the_unchanged(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    response = client.get(f"/audit/{trail['changed'].pk}/")
    assert response.status_code == 200
    changed = {row.key: row for row in response.context["changed"]}
    assert set(changed) == {"base_url"}
    assert changed["base_url"].before == "https://old.example"
    unchanged = {row.key for row in response.context["unchanged"]}
    # A secret is redacted on both sides, so it reads as unchanged and never in full.
    assert unchanged == {"rate", "client_secret"}
    html = response.content.decode()
    assert 'data-key="base_url"' in html and "s1" not in html and "s2" not in html
    assert REDACTED in html


def test_one_page_costs_the_same_queries_however_many_rows(
    demo_staff: dict[str, StaffUser], django_assert_num_queries: Any
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    people = list(StaffUser.objects.all())
    client.get("/audit/")  # warm the session and the user
    for i in range(3):
        audit_record(actor=people[i % len(people)], action="test.row", details={"i": i})

    def count() -> int:
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            assert client.get("/audit/").status_code == 200
        return len(queries)

    few = count()
    for i in range(40):
        audit_record(actor=people[i % len(people)], action="test.row", details={"i": i})
    assert count() == few


def test_the_export_streams_the_filtered_rows_formula_safe(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    response = client.get("/audit/export.csv", {"person": demo_staff["admin"].pk})
    assert response.status_code == 200
    assert response.streaming
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {row["action"] for row in rows} == {"gateway.environment_updated", "role.granted"}
    changed = next(row for row in rows if row["action"] == "gateway.environment_updated")
    assert changed["person"] == demo_staff["admin"].email
    assert '"base_url": "https://new.example"' in changed["after"]
    assert "s2" not in changed["after"]
    # details start with `{`; the writer still neutralises any cell a spreadsheet would run
    assert changed["entry_hash"] == trail["changed"].entry_hash


def test_the_verify_page_names_the_broken_link(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    client = client_signed_in(demo_staff["auditor"])
    ok = client.get("/audit/verify/")
    assert ok.status_code == 200 and 'data-testid="chain-ok"' in ok.content.decode()
    victim = trail["approved"]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE staff_auditentry SET action = %s WHERE id = %s", ["payout.nothing", victim.pk]
        )
    broken = client.get("/audit/verify/").content.decode()
    assert 'data-testid="chain-broken"' in broken
    assert f"entry {victim.pk}</a> (#{victim.seq})" in broken


def test_the_api_lists_filters_shows_one_and_verifies(
    trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    token = api_token_create(user=demo_staff["auditor"], name="t", scopes=("read",), days=30)
    api = Client(headers={"Authorization": f"Bearer {token.plaintext}"})
    listed = api.get("/api/v1/audit", {"action": "gateway.env", "page_size": 10}).json()
    assert listed["count"] == 1
    item = listed["items"][0]
    assert item["id"] == trail["changed"].pk and item["changed"] == ["base_url"]
    assert item["person"] == demo_staff["admin"].email
    one = api.get(f"/api/v1/audit/{trail['system'].pk}").json()
    assert one["person"] is None and one["details"] == {"count": 3}
    assert api.get("/api/v1/audit/999999").status_code == 404
    bad = api.get("/api/v1/audit", {"person": "x; drop", "since": "yesterday"})
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"person", "since"}
    verified = api.get("/api/v1/audit/verify").json()
    assert verified["ok"] is True and verified["broken"] is None
    AuditEntry.objects.filter(pk=trail["system"].pk).update(details={"count": 4})
    verified = api.get("/api/v1/audit/verify").json()
    assert verified["ok"] is False
    assert verified["broken"]["entry_id"] == trail["system"].pk


@pytest.mark.parametrize("role", [role.key for role in ROLES])
def test_only_auditors_and_admins_read_the_trail(
    role: str, trail: dict[str, Any], demo_staff: dict[str, StaffUser]
) -> None:
    allowed = role in {"auditor", "admin"}
    user = demo_staff[role]
    client = client_signed_in(user)
    pk = trail["changed"].pk
    for url in ("/audit/", f"/audit/{pk}/", "/audit/verify/", "/audit/export.csv"):
        assert client.get(url).status_code == (200 if allowed else 403), url
    # As stored, even scopes beyond the role (creation refuses them: a token from before then).
    token = token_with_scopes(user, TOKEN_SCOPES, days=1)
    api = Client(headers={"Authorization": f"Bearer {token}"})
    for url in ("/api/v1/audit", f"/api/v1/audit/{pk}", "/api/v1/audit/verify"):
        assert api.get(url).status_code == (200 if allowed else 403), url


def test_the_diff_names_changed_added_removed_and_same() -> None:
    from console.audit.diff import diff_rows

    rows = {
        r.key: r for r in diff_rows({"a": 1, "b": "x", "c": [1]}, {"a": 2, "c": [1], "d": None})
    }
    assert {k: r.change for k, r in rows.items()} == {
        "a": "changed",
        "b": "removed",
        "c": "same",
        "d": "added",
    }
    assert (rows["a"].before, rows["a"].after, rows["d"].after) == ("1", "2", "null")


def test_entries_keeping_before_and_after_in_details_diff_the_same_way() -> None:
    from console.audit.diff import before_after, changed_keys

    entry = audit_record(
        actor=None,
        action="recipient.refreshed",
        details={"before": {"status": "pending"}, "after": {"status": "active"}},
    )
    assert changed_keys(*before_after(entry)) == ["status"]
    groups = audit_record(actor=None, action="role.x", details={"before": ["a"], "after": ["b"]})
    assert before_after(groups) == ({"value": ["a"]}, {"value": ["b"]})


def test_an_entry_reads_as_its_actions_label_and_its_fields_as_words_in_spanish(
    demo_staff: dict[str, Any],
) -> None:
    from payouts.models import Payout
    from tests.finance import make_draft, make_environment

    payout = make_draft(maker=demo_staff["finance_maker"], environment=make_environment())
    entry = audit_record(
        actor=demo_staff["finance_approver"],
        action="payout.approved",
        target=Payout.objects.get(pk=payout.pk),
        before={"status": "pending_approval"},
        after={"status": "approved"},
    )
    admin = demo_staff["admin"]
    admin.language = "es"
    admin.save(update_fields=["language"])
    client = client_signed_in(admin)
    listing = client.get(reverse("console:audit")).content.decode()
    detail = client.get(reverse("console:audit_detail", args=[entry.pk])).content.decode()
    assert '<td data-action="payout.approved">Pago aprobado</td>' in listing
    assert '<h1 data-action="payout.approved">Pago aprobado</h1>' in detail
    assert "Pendiente de aprobación" in detail and "pending_approval" not in detail
    assert "payouts.payout #" not in listing  # the record's type by its model's name
    # The machine code stays in the CSV and the API.
    assert "payout.approved" in client.get(reverse("console:audit_export")).getvalue().decode()


def test_every_action_written_in_the_code_has_a_label() -> None:
    import re
    from pathlib import Path

    from django.conf import settings

    from staff.audit_actions import AUDIT_ACTIONS, audit_action_label

    root = Path(settings.BASE_DIR)
    skipped = {"tests", "emulator", "sandbox", "bench", "node_modules", ".venv"}
    sources = [
        p.read_text() for p in root.glob("*/**/*.py") if p.relative_to(root).parts[0] not in skipped
    ]
    # Every action an audit entry is written with (step-up's own action names are not entries).
    written = {
        a for text in sources for a in re.findall(r'(?:action|audit)="([a-z_]+\.[a-z_.]+)"', text)
    }
    step_up_actions = {
        a for text in sources for a in re.findall(r'step_up\w*\([^)]*action="([a-z_.]+)"', text)
    }
    unlabelled = sorted(a for a in written - step_up_actions if audit_action_label(a) == a)
    assert unlabelled == [], "declare their labels in the owning app's audit_actions.py"
    assert audit_action_label("end_user.event.user.updated") == str(
        AUDIT_ACTIONS["end_user.event."]
    )
