"""Python strings in the person's language (issue 23): navigation, refusals on pages and in the
API (the message follows Accept-Language, the code never changes), form errors, choices labels
and the payout notifications' emails, each in its recipient's language."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.utils import translation

from console.sentences import Summary
from console.templatetags.ui import money
from payouts.models import ChangeSource, Payout, PayoutStatus
from payouts.states import payout_transition
from staff.models import StaffUser
from tests.finance import make_draft, make_environment
from tests.identity import client_signed_in

S = PayoutStatus
LANGUAGES = ["es", "pt-BR"]


def pending(staff: dict[str, StaffUser], maker: str = "maker") -> Payout:
    from gateway.models import Environment

    environment = Environment.objects.first() or make_environment()
    payout = make_draft(maker=staff[maker], environment=environment)
    payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=payout.maker)
    return Payout.objects.get(pk=payout.pk)


def speaking(client: Client, language: str) -> Client:
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    return client


@pytest.mark.parametrize(
    ("language", "section", "item", "english"),
    [
        ("es", "Finanzas", "Aprobaciones", "Approvals"),
        ("pt-BR", "Finanças", "Aprovações", "Approvals"),
        ("en", "Finance", "Approvals", "Aprobaciones"),
    ],
)
def test_navigation_labels_follow_the_browsers_language(
    staff: dict[str, StaffUser], language: str, section: str, item: str, english: str
) -> None:
    page = speaking(client_signed_in(staff["approver"]), language).get("/").content.decode()
    assert f">{section}<" in page and f">{item}<" in page
    assert f">{english}<" not in page


def test_a_persons_own_language_wins_over_the_browsers(staff: dict[str, StaffUser]) -> None:
    approver = staff["approver"]
    approver.language = "pt-br"
    approver.save(update_fields=["language"])
    page = speaking(client_signed_in(approver), "es").get("/").content.decode()
    assert ">Aprovações<" in page and ">Aprobaciones<" not in page


@pytest.mark.parametrize(
    ("language", "refusal"),
    [
        ("es", "Usted preparó este pago; otra persona debe aprobarlo."),
        ("pt-BR", "Você preparou este pagamento; outra pessoa deve aprová-lo."),
    ],
)
def test_a_refusal_on_the_page_is_in_the_persons_language(
    staff: dict[str, StaffUser], language: str, refusal: str
) -> None:
    payout = pending(staff, maker="maker_approver")
    client = speaking(client_signed_in(staff["maker_approver"]), language)
    response = client.post(f"/payouts/{payout.pk}/approve/", HTTP_HX_REQUEST="true")
    assert refusal in response.content.decode()
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL and not payout.approvals.exists()


@pytest.mark.parametrize(
    ("language", "message", "status_label"),
    [
        ("en", "Say why the payout is rejected.", "Pending approval"),
        ("es", "Indique por qué se rechaza el pago.", "Pendiente de aprobación"),
        ("pt-BR", "Diga por que o pagamento é rejeitado.", "Aguardando aprovação"),
    ],
)
def test_api_errors_follow_accept_language_and_codes_stay(
    staff: dict[str, StaffUser], language: str, message: str, status_label: str
) -> None:
    payout = pending(staff)
    client = speaking(client_signed_in(staff["approver"]), language)
    response = client.post(
        f"/api/v1/payouts/{payout.pk}/reject",
        data=json.dumps({"reason": ""}),
        content_type="application/json",
    )
    assert response.status_code == 400
    body = response.json()
    # The code and the field name are the API's contract: never translated.
    assert body["code"] == "reason_required"
    assert body["message"] == message
    assert body["errors"] == [{"field": "reason", "message": message}]
    own = pending(staff, maker="maker_approver")
    maker = speaking(client_signed_in(staff["maker_approver"]), language)
    refused = maker.post(
        f"/api/v1/payouts/{own.pk}/approve", data="{}", content_type="application/json"
    )
    assert refused.status_code == 403 and refused.json()["code"] == "maker"
    # A choices label on a page, in the same language.
    assert status_label in client.get(f"/payouts/{payout.pk}/").content.decode()


@pytest.mark.parametrize(
    ("language", "label", "error"),
    [
        (
            "es",
            "Motivo para el preparador",
            "Quite los caracteres de control (como NUL); no se pueden guardar ni enviar.",
        ),
        (
            "pt-BR",
            "Motivo para o preparador",
            "Remova os caracteres de controle (como NUL); eles não podem ser armazenados nem "
            "enviados.",
        ),
    ],
)
def test_a_form_error_and_its_label_are_in_the_persons_language(
    staff: dict[str, StaffUser], language: str, label: str, error: str
) -> None:
    payout = pending(staff)
    client = speaking(client_signed_in(staff["approver"]), language)
    response = client.post(
        f"/payouts/{payout.pk}/reject/", {"reason": "bad\x00"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert f">{label}</label>" in html
    assert f"<li>{error}</li>" in html
    payout.refresh_from_db()
    assert payout.status == S.PENDING_APPROVAL


def test_notifications_are_emailed_in_each_recipients_language(
    staff: dict[str, StaffUser], django_capture_on_commit_callbacks: Any
) -> None:
    from payouts.approval.services import payout_reject

    staff["approver"].language = "es"
    staff["approver"].save(update_fields=["language"])
    staff["maker"].language = "pt-br"
    staff["maker"].save(update_fields=["language"])
    with django_capture_on_commit_callbacks(execute=True):
        payout = pending(staff)
    waiting = next(m for m in mail.outbox if m.to == [staff["approver"].email])
    assert waiting.subject == f"PayOps: En espera de su aprobación (pago {payout.pk})"
    # The amount written the Spanish way (issue 30: `100,00 USD`, never `100.00 USD`).
    with translation.override("es"):
        figure = money(payout.amount, "USD")
    assert figure.endswith(",00 USD")
    assert f"El pago {payout.pk} de {figure} espera su aprobación." in waiting.body
    english = next(m for m in mail.outbox if m.to == [staff["approver2"].email])
    assert english.subject == f"PayOps: Waiting for your approval (payout {payout.pk})"
    assert f"Payout {payout.pk} of {payout.amount} USD waits for approval." in english.body
    with django_capture_on_commit_callbacks(execute=True):
        payout_reject(payout=payout, by=staff["approver"], reason="Fatura errada")
    rejected = mail.outbox[-1]
    assert rejected.to == [staff["maker"].email]
    assert rejected.subject == f"PayOps: Seu pagamento foi rejeitado (pagamento {payout.pk})"
    assert f"Seu pagamento {payout.pk} foi rejeitado." in rejected.body
    assert "Fatura errada" in rejected.body


def test_the_dashboards_notification_is_in_the_readers_language_with_its_amount(
    staff: dict[str, StaffUser], django_capture_on_commit_callbacks: Any
) -> None:
    staff["approver"].language = "pt-br"
    staff["approver"].save(update_fields=["language"])
    with django_capture_on_commit_callbacks(execute=True):  # the notifications, after commit
        payout = pending(staff)
    page = client_signed_in(staff["approver"]).get("/").content.decode()
    with translation.override("pt-br"):
        figure = money(payout.amount, "USD")
    assert f"O pagamento {payout.pk} de {figure} aguarda aprovação." in page
    assert "waits for approval" not in page and f"{payout.amount} USD" not in page


def test_an_old_notification_is_read_back_from_its_english_text() -> None:
    from importlib import import_module

    migration = import_module("payouts.migrations.0011_notification_message_json")
    stored = migration.message_of("Payout 7 of 1234.50 USD waits for approval.")
    sentence = Summary.from_json(stored)
    assert sentence is not None
    with translation.override("es"):
        assert sentence.render(fallback="?") == "El pago 7 de 1.234,50 USD espera aprobación."
    returned = Summary.from_json(migration.message_of("Payout 8 returned: account closed"))
    assert returned is not None
    with translation.override("pt-br"):
        assert returned.render(fallback="?") == "Pagamento 8: devolvido, account closed"
    assert migration.message_of("Something else") is None
