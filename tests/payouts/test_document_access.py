"""Supporting documents are readable by whoever may read the payout, as safe downloads, and each
opening is recorded, audited and shown to the approvers before they approve."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from gateway.models import Environment
from gateway.services.environments import environment_switch
from payouts.drafts.documents import document_add
from payouts.models import Payout, PayoutDocument, PayoutDocumentView
from staff.models import AuditEntry, StaffUser
from tests.finance import make_draft, make_environment, make_staff
from tests.identity import client_signed_in

pytestmark = pytest.mark.django_db

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"
READERS = ["finance_maker", "finance_approver", "compliance", "admin"]


@pytest.fixture(autouse=True)
def _media(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture
def environment() -> Environment:
    return make_environment()


@pytest.fixture
def draft(environment: Environment) -> Payout:
    return make_draft(maker=make_staff("finance_maker"), environment=environment)


@pytest.fixture
def document(draft: Payout) -> PayoutDocument:
    upload = SimpleUploadedFile("invoice 42.pdf", PDF, content_type="application/pdf")
    return document_add(by=draft.maker, payout=draft, upload=upload)


def _client(user: StaffUser, environment: Environment) -> Client:
    environment_switch(user=user, environment=environment)
    return client_signed_in(user)


def _page_url(document: PayoutDocument) -> str:
    return f"/payouts/{document.payout_id}/documents/{document.pk}/"


def _api_url(document: PayoutDocument) -> str:
    return f"/api/v1/payouts/{document.payout_id}/documents/{document.pk}/content"


def _assert_safe_download(response, content: bytes) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == content
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].startswith("attachment;")
    assert 'filename="invoice 42.pdf"' in response["Content-Disposition"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"].startswith("sandbox")
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize("role", READERS)
def test_every_payout_reader_downloads_the_documents_on_the_page_and_the_api(
    role: str, environment: Environment, document: PayoutDocument
) -> None:
    reader = make_staff(role)
    client = _client(reader, environment)
    _assert_safe_download(client.get(_page_url(document)), PDF)
    _assert_safe_download(client.get(_api_url(document)), PDF)

    listed = client.get(f"/api/v1/payouts/{document.payout_id}/documents")
    assert listed.status_code == 200
    (row,) = listed.json()
    assert row["sha256"] == document.sha256 and row["size"] == len(PDF)
    assert row["opened_by"] == [reader.email]
    assert row["content_url"] == _api_url(document)


def test_staff_who_cannot_read_payouts_get_403_and_nothing_is_recorded(
    environment: Environment, document: PayoutDocument
) -> None:
    nobody = StaffUser.objects.create_user("norole-docs@payops.test", "pw-not-secret-123")
    client = _client(nobody, environment)
    assert client.get(_page_url(document)).status_code == 403
    assert client.get(_api_url(document)).status_code == 403
    assert client.get(f"/api/v1/payouts/{document.payout_id}/documents").status_code == 403
    assert not PayoutDocumentView.objects.exists()


def test_a_document_of_another_payout_or_environment_is_404(
    environment: Environment, document: PayoutDocument
) -> None:
    reader = make_staff("finance_approver")
    other = make_draft(maker=make_staff("finance_maker"), environment=environment)
    client = _client(reader, environment)
    assert client.get(f"/payouts/{other.pk}/documents/{document.pk}/").status_code == 404
    assert (
        client.get(f"/api/v1/payouts/{other.pk}/documents/{document.pk}/content").status_code == 404
    )
    elsewhere = _client(reader, make_environment("Other sandbox"))
    assert elsewhere.get(_page_url(document)).status_code == 404
    assert elsewhere.get(_api_url(document)).status_code == 404
    assert not PayoutDocumentView.objects.exists()


def test_unauthenticated_requests_get_no_document(document: PayoutDocument) -> None:
    assert Client().get(_page_url(document)).status_code == 302  # to the sign-in page
    assert Client().get(_api_url(document)).status_code == 401


def test_an_opening_is_recorded_once_per_person_and_audited_each_time(
    environment: Environment, document: PayoutDocument
) -> None:
    approver = make_staff("finance_approver")
    client = _client(approver, environment)
    client.get(_page_url(document))
    client.get(_api_url(document))

    view = PayoutDocumentView.objects.get()
    assert (view.document, view.viewer) == (document, approver)
    assert view.last_viewed_at >= view.first_viewed_at
    entries = AuditEntry.objects.filter(action="payout.document_viewed")
    assert entries.count() == 2
    assert all(e.details["sha256"] == document.sha256 for e in entries)
    assert all(e.actor == approver for e in entries)


def test_the_approver_sees_which_documents_they_have_not_opened_before_approving(
    environment: Environment, document: PayoutDocument
) -> None:
    payout = document.payout
    Payout.objects.filter(pk=payout.pk).update(status="pending_approval", approvals_required=1)
    approver = make_staff("finance_approver")
    client = _client(approver, environment)

    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="approve"' in page
    assert 'data-testid="documents-not-opened"' in page and document.sha256 in page
    assert "nobody yet" in page

    client.get(_page_url(document))
    page = client.get(f"/payouts/{payout.pk}/").content.decode()
    assert 'data-testid="documents-not-opened"' not in page
    assert approver.email in page.split('data-testid="document-opened-by"')[1].split("</td>")[0]


def test_the_bulk_confirmation_lists_each_payouts_documents_and_what_you_opened(
    environment: Environment, document: PayoutDocument
) -> None:
    payout = document.payout
    Payout.objects.filter(pk=payout.pk).update(status="pending_approval", approvals_required=1)
    approver = make_staff("finance_approver")
    client = _client(approver, environment)
    confirm = client.post("/payouts/approvals/approve/", {"payout": [payout.pk]})
    page = confirm.content.decode()
    assert "invoice 42.pdf" in page and document.sha256 in page and "not opened by you" in page
    assert _page_url(document) in page

    client.get(_page_url(document))
    page = client.post("/payouts/approvals/approve/", {"payout": [payout.pk]}).content.decode()
    assert "not opened by you" not in page and ">opened<" in page


def test_the_approvals_show_how_many_documents_each_approver_opened(
    environment: Environment, document: PayoutDocument
) -> None:
    from payouts.models import Approval

    payout = document.payout
    second = document_add(
        by=payout.maker,
        payout=payout,
        upload=SimpleUploadedFile("contract.pdf", PDF, content_type="application/pdf"),
    )
    Payout.objects.filter(pk=payout.pk).update(status="pending_approval", approvals_required=2)
    careful, hasty = make_staff("finance_approver"), make_staff("finance_approver")
    reader = _client(careful, environment)
    reader.get(_page_url(document))
    reader.get(_page_url(second))
    for approver in (careful, hasty):
        Approval.objects.create(payout=payout, approver=approver, round=payout.approval_round)

    page = _client(make_staff("compliance"), environment).get(f"/payouts/{payout.pk}/")
    cells = page.content.decode().split('data-testid="approval-documents-opened">')[1:]
    assert [cell.split("<")[0] for cell in cells] == ["2 of 2", "0 of 2"]


def test_a_download_is_named_for_what_its_content_is(
    environment: Environment, draft: Payout
) -> None:
    """A PNG uploaded as "scan.pdf" is stored as a PNG (its content decides) and downloads as
    "scan.pdf.png" with image/png, so the reader's system opens it with the right program."""
    from tests.payouts.test_documents import png

    upload = SimpleUploadedFile("scan.pdf", png(10, 10), content_type="application/pdf")
    document = document_add(by=draft.maker, payout=draft, upload=upload)
    response = _client(make_staff("finance_approver"), environment).get(_page_url(document))

    assert response["Content-Type"] == "image/png"
    assert 'filename="scan.pdf.png"' in response["Content-Disposition"]
