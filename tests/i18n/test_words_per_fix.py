"""One test per word that used to be a code or English on Spanish and Portuguese pages (issue 30,
item 6); tests/i18n/test_words_not_codes.py walks every page for them all."""

from __future__ import annotations

import pytest
from django import forms
from django.utils import translation

from accounts.models import VirtualAccount, VirtualAccountMode
from console.forms import IsoDateField
from console.views import health_row
from payouts.tracking.events import event_note_text


def test_a_health_check_its_status_and_details_are_named_in_words() -> None:
    with translation.override("es"):
        row = health_row("payouts_quiet", {"status": "warning", "quiet_for": "2 h", "detail": "x"})
    assert row["name"] == "Pagos sin novedades"
    assert row["status_label"] == "Requiere revisión" and row["status"] == "warning"
    assert row["details"] == [("Sin novedades desde hace", "2 h"), ("Detalles", "x")]


def test_an_event_that_did_not_move_its_payout_says_why_in_the_readers_language() -> None:
    with translation.override("pt-br"):
        assert event_note_text("already in this state") == "o pagamento já estava neste estado"
        late = event_note_text(
            "not applied: completed cannot become processing (late or out of order)"
        )
    assert "“concluído”" in late.lower() and "completed" not in late


def test_an_account_is_named_in_the_readers_language() -> None:
    account = VirtualAccount(mode=VirtualAccountMode.FIAT, account_number="12348907")
    with translation.override("es"):
        assert str(account) == "Cuenta fiat …8907"
    with translation.override("pt-br"):
        assert str(account) == "Conta fiduciária …8907"


def test_the_date_placeholder_is_in_the_readers_language() -> None:
    class Form(forms.Form):
        day = IsoDateField()

    with translation.override("es"):
        assert 'placeholder="aaaa-mm-dd"' in str(Form()["day"])
    with translation.override("en"):
        assert 'placeholder="yyyy-mm-dd"' in str(Form()["day"])


@pytest.mark.django_db
def test_the_systems_default_alert_rules_are_named_in_the_readers_language() -> None:
    from alerts.bootstrap import default_rules_create
    from alerts.models import AlertRule

    default_rules_create()
    rule = AlertRule.objects.get(kind="payout_failed")
    with translation.override("es"):
        spanish, label = rule.display_name, rule.kind_label
    assert spanish == label and spanish != rule.name
    rule.name = "Failures my team watches"
    assert rule.display_name == rule.name  # a name someone wrote stays theirs
