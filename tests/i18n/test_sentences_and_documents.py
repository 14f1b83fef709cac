"""The English left on Spanish and Brazilian Portuguese pages and documents (issue 23's leftovers).

A sentence around inline markup (the 403 page, the lockout page, the quote's arithmetic check,
the quota gauge) is one message, its markup rendered into a variable first (`{% capture %}`),
so it reads whole in each language with its markup kept. The statement, the receipt and the
evidence pack (PDFs) say every heading and label in the reader's language, with money and times
written as the pages write them (docs/ui.md, "Languages"). Python that made English for a page
(a forecast, a duration, a page message) says it in the reader's language too.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal as D

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import translation
from pypdf import PdfReader

from books.statements.pdf import statement_pdf_write
from books.statements.receipt_pdf import receipt_pdf_write
from books.statements.receipts import receipt_build
from books.statements.statement import statement_build
from gateway.models import EnvironmentKind
from gateway.selectors import budget_forecast
from gateway.services.environments import environment_create
from payouts.evidence.services import payout_evidence_pack
from quotes.arithmetic import recompute
from staff.models import StaffUser
from staff.templatetags.staff_tags import duration_words
from tests.books.statement_fixtures import October, build_october
from tests.finance import MXN_1000, make_draft, make_environment, make_staff
from tests.identity import client_signed_in

LANGUAGES = ["es", "pt-br"]


@pytest.fixture(autouse=True)
def _language_restored() -> Iterator[None]:
    """A request leaves its language active in the thread: the next test must not read Spanish."""
    with translation.override(translation.get_language()):
        yield


def _text(html: str) -> str:
    """A fragment's words as a person reads them: tags out, spaces folded."""
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


def _pdf_text(content: bytes) -> str:
    return " ".join(
        " ".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages).split()
    )


def _speaking(person: StaffUser, language: str) -> Client:
    person.language = language
    person.save(update_fields=["language"])
    return client_signed_in(person)


# --- Sentences around markup ---------------------------------------------------------------------


# The role comes first in both languages: only a whole sentence can move it (the fragments of
# "Your account (...) holds the role <strong>X</strong>, which does not include this page." could
# not).
FORBIDDEN = {
    "es": "El rol <strong>{role}</strong> de su cuenta ({email}) no incluye esta página.",
    "pt-br": "O papel <strong>{role}</strong> da sua conta ({email}) não inclui esta página.",
}


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_403_page_says_its_sentence_whole_with_the_role_in_bold(
    language: str, demo_staff: dict[str, StaffUser]
) -> None:
    person = demo_staff["compliance"]
    response = _speaking(person, language).get("/quotes/")
    assert response.status_code == 403
    page = response.content.decode()
    sentence = page[page.index('data-testid="forbidden"') :]
    sentence = " ".join(sentence[: sentence.index("</p>")].split())
    role = re.search(r"<strong>([^<]+)</strong>", sentence)
    assert role is not None
    expected = FORBIDDEN[language].format(role=role.group(1), email=person.email)
    assert expected in sentence, sentence
    assert "include" not in sentence and "holds" not in sentence


LOCKED = {
    "es": (
        "Demasiados intentos fallidos de inicio de sesión para "
        "<strong>approver@payops.local</strong>",
        r"Puede intentarlo de nuevo en <strong>\d+ segundos</strong>, después de las <strong><time",
    ),
    "pt-br": (
        "Tentativas de login malsucedidas demais para <strong>approver@payops.local</strong>",
        r"Você pode tentar novamente em <strong>\d+ segundos</strong>, depois de <strong><time",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_lockout_page_says_who_and_when_in_whole_sentences(
    language: str, demo_staff: dict[str, StaffUser], settings
) -> None:  # type: ignore[no-untyped-def]
    settings.PAYOPS_LOGIN_FAILURE_LIMIT = 3
    settings.PAYOPS_LOGIN_BACKOFF_SECONDS = 30
    settings.PAYOPS_LOGIN_BACKOFF_MAX_SECONDS = 120
    settings.PAYOPS_LOGIN_NOTICE_AFTER = 3
    client = Client(HTTP_ACCEPT_LANGUAGE="es-MX,es" if language == "es" else "pt-BR,pt")
    for _ in range(3):
        response = client.post(
            "/login/", {"username": "approver@payops.local", "password": "wrong"}
        )
    assert response.status_code == 429
    page = " ".join(response.content.decode().split())
    page = page[page.index('data-testid="locked-out"') :]
    who, when = LOCKED[language]
    assert who in page, page[:900]
    assert re.search(when, page), page[:900]  # the wait counts down: any number of seconds
    assert "try again" not in page and "Too many" not in page


def _disagreeing_check():  # type: ignore[no-untyped-def]
    figures = replace(MXN_1000, total_fees=D("6.02"), base_currency="USD", quote_currency="MXN")
    return recompute(figures)


ARITHMETIC = {
    "es": (
        "informado 6,02 USD, recalculado 6,00 USD; la diferencia de 0,02 USD supera los "
        "0,01 USD que explica el redondeo."
    ),
    "pt-br": (
        "informado 6,02 USD, recalculado 6,00 USD; a diferença de 0,02 USD é maior que os "
        "0,01 USD que o arredondamento explica."
    ),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_quote_arithmetic_states_a_disagreement_in_one_sentence(language: str) -> None:
    with translation.override(language):
        html = render_to_string("quotes/includes/arithmetic.html", {"check": _disagreeing_check()})
    note = html[html.index('data-check-note="total_fees"') :]
    note = note[: note.index("</li>")]
    assert ARITHMETIC[language] in _text(note), _text(note)
    assert note.count('<span class="money') == 4  # each figure keeps the money component


EXPLAINED = {"es": "difiere en", "pt-br": "difere em"}  # "dentro de ±" in both


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_quote_arithmetic_explains_a_rounding_in_one_sentence(language: str) -> None:
    figures = replace(MXN_1000, total_fees=D("6.01"), base_currency="USD", quote_currency="MXN")
    with translation.override(language):
        html = render_to_string("quotes/includes/arithmetic.html", {"check": recompute(figures)})
    notes = html[html.index('data-testid="arithmetic-notes"') :]
    note = notes[: notes.index("</li>")]
    assert re.search(
        rf"<strong>[^<]+</strong> {EXPLAINED[language]} <span class=\"money\">0,01 USD</span>, "
        r"dentro de ± <span class=\"money\">0,01 USD</span>\.",
        " ".join(note.split()),
    ), note
    assert "differs" not in note and "within" not in note


QUOTA = {
    "es": 'llamadas usadas, <strong class="quota-remaining">10.000</strong> restantes (semana del',
    "pt-br": 'chamadas usadas, <strong class="quota-remaining">10.000</strong> restantes '
    "(semana de",
}
RESETS = {"es": "se reinicia el <time", "pt-br": "reinicia em <time"}


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_quota_gauge_says_its_week_in_one_sentence(
    language: str, demo_staff: dict[str, StaffUser]
) -> None:
    environment_create(
        by=None,
        name="Gauge env",
        kind=EnvironmentKind.SANDBOX,
        base_url="https://api.example.test",
        client_id="c",
        password="p",
        api_key="k",
        weekly_budget=10_000,
    )
    page = _speaking(demo_staff["admin"], language).get(reverse("gateway:quota")).content
    figures = page.decode()
    figures = figures[figures.index('<p class="quota-figures">') :]
    figures = " ".join(figures[: figures.index("</p>")].split())
    assert '<strong class="quota-used">0</strong> de 10.000' in figures
    assert QUOTA[language] in figures
    assert RESETS[language] in figures and figures.endswith("</time>).")
    assert "resets" not in figures and "week of" not in figures


METHOD_NOT_ALLOWED = {
    "es": "así que no se puede abrir con GET: acepta POST, OPTIONS.",
    "pt-br": "então não pode ser aberto com GET: ele aceita POST, OPTIONS.",
}


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_405_page_names_the_methods_in_one_sentence(
    language: str, demo_staff: dict[str, StaffUser]
) -> None:
    response = _speaking(demo_staff["finance_maker"], language).get(reverse("staff:logout"))
    assert response.status_code == 405
    assert METHOD_NOT_ALLOWED[language] in " ".join(response.content.decode().split())


# --- Words made in Python for a page ----------------------------------------------------------


def test_the_forecast_and_a_wait_are_said_in_the_readers_language() -> None:
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    with translation.override("es"):
        forecast = budget_forecast(
            now=now, used=100, budget=200, recent_calls=96, window_start=now - timedelta(hours=24)
        )
        assert forecast.text == "Se agota el jue 26 Nov 13:00 UTC"
        assert duration_words(timedelta(minutes=1, seconds=30)) == "1 minuto 30 segundos"
    with translation.override("pt-br"):
        forecast = budget_forecast(
            now=now, used=100, budget=200, recent_calls=96, window_start=now - timedelta(hours=24)
        )
        assert forecast.text.startswith("Esgota em ") and "13:00 UTC" in forecast.text
        assert duration_words(timedelta(hours=2)) == "2 horas"


# --- Documents ---------------------------------------------------------------------------------


@pytest.fixture
def october() -> October:
    return build_october(make_environment())


STATEMENT = {
    "es": (
        "Saldo inicial",
        "Depósitos",
        "Comisiones",
        "Devoluciones",
        "Ajustes",
        "Moneda",
        "Período",
        "del 01 Oct 2026 al 31 Oct 2026",
        "No verificado con el proveedor: no se tomó ninguna lectura",
        "Fecha (UTC)",
        "Detalles",
        "Referencia",
        "Saldo",
        "500,00 USD",
        "El destinatario recibe 1.984,00 MXN a 19,840000",
        "Generado el",
        "Página 1 de",
    ),
    "pt-br": (
        "Saldo inicial",
        "Depósitos",
        "Tarifas",
        "Devoluções",
        "Ajustes",
        "Moeda",
        "Período",
        "de 01 Out 2026 a 31 Out 2026",
        "Não verificado com o provedor: nenhuma leitura",
        "Data (UTC)",
        "Detalhes",
        "Referência",
        "500,00 USD",
        "O destinatário recebe 1.984,00 MXN a 19,840000",
        "Gerado em",
        "Página 1 de",
    ),
}
ENGLISH_IN_STATEMENT = ("Deposits", "Returns", "Adjustments", "Period", "Details", "Generated")


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_statement_pdf_speaks_the_readers_language(language: str, october: October) -> None:
    with translation.override(language):
        statement = statement_build(
            virtual_account=october.account,
            start=date(2026, 10, 1),
            end=date(2026, 10, 31),
            by=None,
        )
        out = io.BytesIO()
        statement_pdf_write(statement, out)
    text = _pdf_text(out.getvalue())
    for expected in STATEMENT[language]:
        assert expected in text, expected
    for english in ENGLISH_IN_STATEMENT:
        assert english not in text, english


RECEIPT = {
    "es": (
        "Pago n.º",
        "Montos",
        "Destinatario",
        "Aprobaciones",
        "Paso",
        "Cuándo",
        "Fechas y horas",
        "100,00 USD",
        "1.984,00 MXN",
        "1 USD = 19,840000 MXN",
        "Margen cambiario en el tipo de cambio",
        "Generado el",
    ),
    "pt-br": (
        "Pagamento nº",
        "Valores",
        "Destinatário",
        "Aprovações",
        "Etapa",
        "Quando",
        "Datas e horas",
        "100,00 USD",
        "1.984,00 MXN",
        "1 USD = 19,840000 MXN",
        "Margem cambial na taxa",
        "Gerado em",
    ),
}
ENGLISH_IN_RECEIPT = ("Amounts", "Approvals", "Timestamps", "FX markup", "Generated", "Step")


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_receipt_pdf_follows_the_persons_language(
    language: str, october: October, demo_staff: dict[str, StaffUser]
) -> None:
    response = _speaking(demo_staff["auditor"], language).get(
        f"/books/receipts/{october.completed.pk}/"
    )
    assert response.status_code == 200
    text = _pdf_text(b"".join(response.streaming_content))  # type: ignore[attr-defined]
    for expected in RECEIPT[language]:
        assert expected in text, expected
    for english in ENGLISH_IN_RECEIPT:
        assert english not in text, english


@pytest.mark.django_db
def test_the_receipt_pdf_stays_english_for_an_english_reader(october: October) -> None:
    with translation.override("en"):
        out = io.BytesIO()
        receipt_pdf_write(receipt_build(payout=october.completed, by=None), out)
    text = _pdf_text(out.getvalue())
    assert "Amounts" in text and "1,984.00 MXN" in text and "Montos" not in text


EVIDENCE = {
    "es": (
        "1. Resumen del pago",
        "2. Cotización y vista previa",
        "3. Documentos de respaldo",
        "4. Aprobaciones",
        "5. Liberación",
        "6. Llamadas al proveedor",
        "7. Eventos recibidos",
        "8. Cronología",
        "9. Registro de auditoría de este pago",
        "10. Cómo verificar este paquete",
        "Referencia",
        "Modalidad",
        "cuenta virtual",
        "Página 1 de",
    ),
    "pt-br": (
        "1. Resumo do pagamento",
        "2. Cotação e prévia",
        "3. Documentos comprobatórios",
        "4. Aprovações",
        "5. Liberação",
        "6. Chamadas ao provedor",
        "7. Eventos recebidos",
        "8. Linha do tempo",
        "9. Trilha de auditoria deste pagamento",
        "10. Como verificar este pacote",
        "Referência",
        "Modalidade",
        "conta virtual",
        "Página 1 de",
    ),
}
ENGLISH_IN_EVIDENCE = ("Payout summary", "Timeline", "Reference", "virtual account", "Memo")


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_evidence_pack_report_speaks_the_readers_language(
    language: str, settings, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path
    draft = make_draft(maker=make_staff("finance_maker"), environment=make_environment())
    with translation.override(language):
        pack = payout_evidence_pack(payout=draft, by=make_staff("admin"))
    with pack.file, zipfile.ZipFile(pack.file) as archive:
        text = _pdf_text(archive.read("evidence.pdf"))
    for expected in EVIDENCE[language]:
        assert expected in text, expected
    for english in ENGLISH_IN_EVIDENCE:
        assert english not in text, english
    assert re.search(r"\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2} UTC", text)  # the pages' dates


# --- No fragments left in the templates fixed here -----------------------------------------------

# A message that starts with punctuation or ends on a comma or a connecting word is a piece of a
# sentence cut around markup (", after", "; the difference", "of %(budget)s calls used,").
FRAGMENT = re.compile(
    r"^[,;.:)]|,$|\b(?:the|a|of|for|in|at|to|by|and|than|after|resets|does not|do not)$"
)
# Whole labels that merely end like a fragment: a heading, a column or a button, no sentence cut.
WHOLE_LABELS = {
    "Sign in",
    "Second-factor resets",
    "Funded by",
    "Uploaded by",
    "Opened by",
    "Requested by",
    "Switch to",
}
WHOLE_SENTENCES = {
    "403.html",
    "405.html",
    "staff/locked_out.html",
    "quotes/includes/arithmetic.html",
    "gateway/includes/quota_gauge_one.html",
    "console/audit_verify.html",
    "payouts/includes/charged_panel.html",
    "payouts/includes/release_step.html",
    "users/detail.html",
    "templates/webhooks/reprocess_progress.html",  # the webhooks app's own catalog
    "accounts/recipient_detail.html",
    "books/reconciliation/run_detail.html",
    "gateway/environment_list.html",
    "payouts/approval_policy.html",
    "payouts/payout_detail.html",
    "payouts/payout_live.html",
    "quotes/includes/quote_card.html",
    "staff/login.html",
    "staff/second_factor_resets.html",
    "sandbox/otp_mailbox.html",
}


def fragments_by_template(po: str) -> dict[str, list[str]]:
    """The fragment-looking msgids of a catalog's text, by the template (`#: file`) using them."""
    found: dict[str, list[str]] = {}
    for block in po.split("\n\n"):
        lines = block.splitlines()
        places = [p for line in lines if line.startswith("#: ") for p in line[3:].split()]
        starts = [i for i, line in enumerate(lines) if line.startswith("msgid ")]
        if not starts:
            continue
        parts = [lines[starts[0]][6:]]
        for line in lines[starts[0] + 1 :]:
            if not line.startswith('"'):
                break
            parts.append(line)
        msgid = "".join(part.strip()[1:-1] for part in parts)
        if msgid and FRAGMENT.search(msgid) and msgid not in WHOLE_LABELS:
            for place in places:
                found.setdefault(place.split(":")[0], []).append(msgid)
    return found


def test_the_check_finds_a_sentence_cut_around_markup() -> None:
    po = (
        '#: staff/locked_out.html\nmsgid ", after"\nmsgstr ""\n\n'
        '#: staff/locked_out.html\nmsgid "Sign-in locked"\nmsgstr ""\n\n'
        '#: gateway/includes/quota_gauge_one.html\nmsgid ""\n"remaining (week of %(w)s, resets"\n'
        'msgstr ""\n'
    )
    assert fragments_by_template(po) == {
        "staff/locked_out.html": [", after"],
        "gateway/includes/quota_gauge_one.html": ["remaining (week of %(w)s, resets"],
    }


def test_the_sentences_around_markup_are_whole_messages() -> None:
    from django.conf import settings

    left = {
        template: found
        for po in settings.BASE_DIR.glob("**/locale/es/LC_MESSAGES/django.po")
        if ".venv" not in po.parts
        for template, found in fragments_by_template(po.read_text(encoding="utf-8")).items()
        if template in WHOLE_SENTENCES
    }
    assert left == {}, left


# --- Refusals made in Python -------------------------------------------------------------------

REFUSALS = {
    "es": ("Inactive env no está activo.", "{name} está archivado; no se le puede pagar."),
    "pt-br": (
        "Inactive env não está ativo.",
        "{name} está arquivado; não pode receber pagamentos.",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_refusal_names_its_subject_in_the_readers_language(
    language: str, demo_staff: dict[str, StaffUser]
) -> None:
    from accounts.models import RecipientStatus
    from accounts.recipients import recipient_not_payable_reason
    from gateway.services.environments import EnvironmentNotActive, environment_switch

    inactive = environment_create(
        by=None,
        name="Inactive env",
        kind=EnvironmentKind.SANDBOX,
        base_url="https://api.example.test",
        client_id="c",
        password="p",
        api_key="k",
        is_active=False,
    )
    recipient = make_draft(maker=make_staff("finance_maker"), environment=inactive).recipient
    recipient.status = RecipientStatus.ARCHIVED
    environment, archived = REFUSALS[language]
    with translation.override(language):
        with pytest.raises(EnvironmentNotActive) as refused:
            environment_switch(user=demo_staff["admin"], environment=inactive)
        assert refused.value.message == environment
        assert recipient_not_payable_reason(recipient) == archived.format(
            name=recipient.display_name
        )
