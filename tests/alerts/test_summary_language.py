"""An alert's summary in the reader's language: fired by the real evaluator, kept as a message and
its parameters beside the English record, and rendered when read, on the history page, the
dashboard, the API, each recipient's email (at once and in the digest) and the webhook (English);
an old alert without the message reads as it was written. The history names the alert's own
environment, not the rule's scope."""

from __future__ import annotations

import importlib
import re
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from alerts.delivery import digest_send
from alerts.models import Alert, AlertRule
from alerts.services import alert_fire, alerts_evaluate, rule_create, subscription_set
from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.models import PayoutStatus
from staff.models import StaffUser
from tests.alerts.receiver import Receiver
from tests.finance import make_draft, make_environment

pytestmark = pytest.mark.django_db

ENGLISH = "Main: no webhook receiver registered, so nothing pushes its events"
IN = {
    "es": "Main: no hay ningún receptor de webhooks registrado, así que nada envía sus eventos",
    "pt-br": "Main: nenhum receptor de webhooks registrado, então nada envia os seus eventos",
}


def speaks(user: StaffUser, language: str) -> StaffUser:
    user.language = language
    user.save(update_fields=["language"])
    return user


@pytest.fixture
def main() -> Environment:
    return make_environment("Main")


@pytest.fixture
def receiver_rule(
    demo_staff: dict[str, StaffUser], main: Environment, receiver: Receiver
) -> AlertRule:
    """A rule watching every environment for a missing webhook receiver, with a webhook; "Main"
    is in use (someone works in it) and has none."""
    rule = rule_create(
        by=demo_staff["admin"],
        name="Receivers",
        kind="webhook_receiver",
        thresholds={},
        environment=None,
        webhook_url=receiver.url,
    )
    environment_switch(user=demo_staff["compliance"], environment=main)
    return rule


def fire(django_capture_on_commit_callbacks: Any) -> Alert:
    with django_capture_on_commit_callbacks(execute=True):
        assert alerts_evaluate()["fired"] == 1
    return Alert.objects.get()


def test_the_evaluators_alert_keeps_its_message_and_the_english_record(
    receiver_rule: AlertRule, main: Environment, django_capture_on_commit_callbacks: Any
) -> None:
    alert = fire(django_capture_on_commit_callbacks)
    assert alert.summary == ENGLISH
    assert alert.summary_message == {
        "msgid": "%(environment)s: no webhook receiver registered, so nothing pushes its events",
        "params": {"environment": "Main"},
    }
    assert alert.environment == main and receiver_rule.environment is None


@pytest.mark.parametrize("language", ["es", "pt-br"])
def test_history_and_dashboard_show_the_summary_in_the_readers_language(
    language: str,
    client_for: Any,
    demo_staff: dict[str, StaffUser],
    receiver_rule: AlertRule,
    django_capture_on_commit_callbacks: Any,
) -> None:
    alert = fire(django_capture_on_commit_callbacks)
    speaks(demo_staff["auditor"], language)
    client = client_for("auditor")

    history = client.get(reverse("alerts:history")).content.decode()
    row = re.search(rf'<tr data-alert="{alert.pk}">(.*?)</tr>', history, re.S)
    assert row is not None
    assert IN[language] in row.group(1) and ENGLISH not in history
    # The note under "Opened" names the alert's environment, not the rule's "every environment".
    assert '<span class="cell-note">Main</span>' in row.group(1)

    dashboard = client.get("/").content.decode()
    panel = dashboard.split('data-testid="open-alerts"', 1)[1].split("</ul>", 1)[0]
    assert IN[language] in panel and ENGLISH not in panel
    assert "· Main" in panel

    # Read again in English by another person: the same alert, its English words.
    english = client_for("finance_maker").get(reverse("alerts:history")).content.decode()
    assert ENGLISH in english and IN[language] not in english


def test_the_api_keeps_the_record_and_adds_the_readers_language(
    client_for: Any,
    demo_staff: dict[str, StaffUser],
    receiver_rule: AlertRule,
    django_capture_on_commit_callbacks: Any,
) -> None:
    alert = fire(django_capture_on_commit_callbacks)
    client = client_for("auditor")
    body = client.get(f"/api/v1/alerts/{alert.pk}", headers={"accept-language": "es"}).json()
    assert body["summary"] == ENGLISH  # machines match on the record
    assert body["summary_display"] == IN["es"]
    assert body["subject_environment"] == "Main" and body["environment"] is None
    speaks(demo_staff["auditor"], "pt-br")  # the person's own choice wins over the header
    (item,) = client.get("/api/v1/alerts", headers={"accept-language": "es"}).json()["items"]
    assert item["summary"] == ENGLISH and item["summary_display"] == IN["pt-br"]


def test_each_recipient_reads_the_email_in_their_language_the_webhook_in_english(
    demo_staff: dict[str, StaffUser],
    receiver_rule: AlertRule,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
) -> None:
    spanish = speaks(demo_staff["finance_approver"], "es")
    english = demo_staff["finance_maker"]
    subscription_set(user=spanish, rule=receiver_rule, mode="immediate")
    subscription_set(user=english, rule=receiver_rule, mode="immediate")
    fire(django_capture_on_commit_callbacks)

    (to_spanish,) = [m for m in mail.outbox if m.to == [spanish.email]]
    assert IN["es"] in to_spanish.subject and IN["es"] in to_spanish.body
    assert ENGLISH not in to_spanish.body
    assert "Main;" in to_spanish.body  # the alert's environment, not "todos los entornos"
    (to_english,) = [m for m in mail.outbox if m.to == [english.email]]
    assert ENGLISH in to_english.subject
    (post,) = receiver.posts
    assert ENGLISH in post["text"]


def test_the_daily_digest_speaks_the_recipients_language(
    demo_staff: dict[str, StaffUser],
    receiver_rule: AlertRule,
    django_capture_on_commit_callbacks: Any,
) -> None:
    reader = speaks(demo_staff["compliance"], "pt-br")
    subscription_set(user=reader, rule=receiver_rule, mode="digest")
    fire(django_capture_on_commit_callbacks)
    mail.outbox.clear()
    assert digest_send(now=timezone.now() + timedelta(minutes=1)) == 1
    (digest,) = mail.outbox
    assert IN["pt-br"] in digest.body and ENGLISH not in digest.body


def test_a_translatable_parameter_is_stored_as_its_key_and_translated_when_read(
    client_for: Any, demo_staff: dict[str, StaffUser], django_capture_on_commit_callbacks: Any
) -> None:
    environment = make_environment("Main")
    payout = make_draft(
        maker=demo_staff["finance_maker"], environment=environment, status=PayoutStatus.FAILED
    )
    rule_create(
        by=demo_staff["admin"],
        name="Failed",
        kind="payout_failed",
        thresholds={},
        environment=None,
    )
    alert = fire(django_capture_on_commit_callbacks)
    assert alert.summary == f"Payout {payout.pk} is failed"
    assert alert.summary_message["params"]["status"] == {
        "label": "payout_status",
        "value": "failed",
        "lower": True,
    }
    assert alert.environment == environment  # a payout's subject: the payout's environment
    speaks(demo_staff["auditor"], "es")
    page = client_for("auditor").get(reverse("alerts:history")).content.decode()
    assert f"El pago {payout.pk} está en estado fallido" in page
    assert '<span class="cell-note">Main</span>' in page


def test_an_old_alert_or_an_unknown_message_reads_as_it_was_stored(
    client_for: Any, demo_staff: dict[str, StaffUser], receiver_rule: AlertRule
) -> None:
    Alert.objects.create(rule=receiver_rule, subject="environment:0", summary="Old words")
    Alert.objects.create(
        rule=receiver_rule,
        subject="environment:00",
        summary="A message since removed",
        summary_message={"msgid": "A message since removed %(x)s", "params": {"x": 1}},
    )
    Alert.objects.create(
        rule=receiver_rule,
        subject="environment:000",
        summary="Main: its parameters changed",
        summary_message={
            "msgid": "%(environment)s: no webhook receiver registered, so nothing pushes its "
            "events",
            "params": {"renamed": "Main"},
        },
    )
    speaks(demo_staff["auditor"], "es")
    page = client_for("auditor").get(reverse("alerts:history")).content.decode()
    for stored in ("Old words", "A message since removed", "Main: its parameters changed"):
        assert f"<td>{stored}</td>" in page
    # An alert fired with a plain text (no message) is kept and read in its own words.
    alert = alert_fire(rule=receiver_rule, subject="account:x", summary="plain", now=timezone.now())
    assert alert is not None and alert.summary_message is None and alert.summary_text() == "plain"


def test_the_migration_fills_existing_alerts_environment_from_their_subject(
    demo_staff: dict[str, StaffUser], receiver_rule: AlertRule, main: Environment
) -> None:
    payout = make_draft(maker=demo_staff["finance_maker"], environment=main)
    subjects = [f"environment:{main.pk}", f"payout:{payout.pk}", "account:a@b.c", "environment:0"]
    for subject in subjects:
        Alert.objects.create(rule=receiver_rule, subject=subject, summary=subject)
    migration = importlib.import_module(
        "alerts.migrations.0002_alert_summary_message_and_environment"
    )
    migration.environments_from_subjects(apps, None)
    found = dict(Alert.objects.values_list("subject", "environment_id"))
    assert found == {
        subjects[0]: main.pk,
        subjects[1]: main.pk,
        subjects[2]: None,
        subjects[3]: None,
    }
