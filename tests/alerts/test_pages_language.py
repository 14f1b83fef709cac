"""The alert pages speak the reader's language down to their smallest words: each rule's thresholds
by their label, never the name they are stored under (`minutes`, `within_hours`), and an alert's
state in its own words, not another page's (the reconciliation's plural "Resolved")."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from alerts.services import alert_fire, rule_create, rule_set_enabled
from staff.models import StaffUser

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("language", "submitting", "failures"),
    [
        ("en", "Minutes in submitting: 15", "Failures at least: 5"),
        ("es", "Minutos en envío: 15", "Fallos, al menos: 5"),
        ("pt-br", "Minutos em envio: 15", "Falhas, no mínimo: 5"),
    ],
)
def test_thresholds_read_by_their_label_in_the_readers_language(
    client_for: Any,
    demo_staff: dict[str, StaffUser],
    language: str,
    submitting: str,
    failures: str,
) -> None:
    admin = demo_staff["admin"]
    rule_create(
        by=admin,
        name="Stuck",
        kind="payout_submitting",
        thresholds={"minutes": 15},
        environment=None,
    )
    rule_create(by=admin, name="Sign-ins", kind="sign_in_failures", thresholds={}, environment=None)
    reader = demo_staff["auditor"]
    reader.language = language
    reader.save(update_fields=["language"])

    page = client_for("auditor").get(reverse("alerts:rules")).content.decode()

    assert submitting in page and failures in page
    assert "minutes:" not in page and "failures:" not in page


@pytest.mark.parametrize(
    ("language", "open_word", "resolved_word", "wrong"),
    [
        ("en", "Open", "Resolved", "Resolved alerts"),
        ("es", "Abierta", "Resuelta", "Resueltas"),
        ("pt-br", "Aberto", "Resolvido", "Resolvidas"),
    ],
)
def test_an_alerts_state_reads_in_its_own_words(
    client_for: Any,
    demo_staff: dict[str, StaffUser],
    language: str,
    open_word: str,
    resolved_word: str,
    wrong: str,
) -> None:
    admin = demo_staff["admin"]
    for name in ("Lasting", "Gone"):
        rule = rule_create(
            by=admin, name=name, kind="webhook_silence", thresholds={}, environment=None
        )
        assert alert_fire(rule=rule, subject="environment:1", summary=name, now=timezone.now())
    rule_set_enabled(rule=rule, enabled=False, by=admin)  # resolves "Gone"'s alert
    reader = demo_staff["auditor"]
    reader.language = language
    reader.save(update_fields=["language"])

    page = client_for("auditor").get(reverse("alerts:history")).content.decode()

    assert f">{open_word}</span>" in page and f">{resolved_word}</span>" in page
    assert f'<option value="resolved">{resolved_word}</option>' in page  # the state filter
    assert wrong not in page
