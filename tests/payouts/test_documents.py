"""Supporting documents: judged by content, limited in size, stored through storage, hashed."""

from __future__ import annotations

import base64
import hashlib
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from payouts.drafts.documents import data_uri, document_add, document_remove, supporting_documents
from payouts.errors import PayoutInvalid
from payouts.models import Payout
from staff.models import AuditEntry, StaffUser
from tests.finance import make_staff

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 32
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32
HTML = b"<!doctype html><script>alert(1)</script>"
ZIP = b"PK\x03\x04" + b"\x00" * 40

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _media(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings.MEDIA_ROOT = tmp_path


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/pdf")


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (PDF, "application/pdf"),
        (PNG, "image/png"),
        (JPEG, "image/jpeg"),
    ],
)
def test_accepted_types_are_stored_hashed_and_attributed(
    draft_payout: Payout, maker: StaffUser, content: bytes, content_type: str
) -> None:
    document = document_add(by=maker, payout=draft_payout, upload=upload("invoice.pdf", content))
    assert document.content_type == content_type
    assert document.sha256 == hashlib.sha256(content).hexdigest()
    assert document.size == len(content) and document.uploaded_by == maker
    assert document.file_name == "invoice.pdf"
    assert not document.file.name.endswith("invoice.pdf")  # never the uploaded name on disk
    with document.file.open("rb") as handle:
        assert handle.read() == content
    assert AuditEntry.objects.filter(action="payout.document_added").count() == 1


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("invoice.pdf", HTML),
        ("scan.png", ZIP),
        ("photo.jpg", b"just text, named .jpg"),
    ],
)
def test_a_wrong_type_disguised_by_its_extension_is_refused(
    draft_payout: Payout, maker: StaffUser, name: str, content: bytes
) -> None:
    with pytest.raises(PayoutInvalid) as refused:
        document_add(by=maker, payout=draft_payout, upload=upload(name, content))
    assert "whatever its name says" in refused.value.by_field["file"][0]
    assert not draft_payout.documents.exists()


def test_a_type_the_settings_do_not_allow_is_refused(
    draft_payout: Payout,
    maker: StaffUser,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    settings.PAYOUT_DOCUMENT_TYPES = ["application/pdf"]
    with pytest.raises(PayoutInvalid) as refused:
        document_add(by=maker, payout=draft_payout, upload=upload("scan.png", PNG))
    assert "image/png" in refused.value.by_field["file"][0]


def test_an_oversize_document_is_refused(
    draft_payout: Payout,
    maker: StaffUser,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    settings.PAYOUT_DOCUMENT_MAX_BYTES = 64
    with pytest.raises(PayoutInvalid) as refused:
        document_add(by=maker, payout=draft_payout, upload=upload("big.pdf", PDF + b"x" * 64))
    assert "limit is 64 bytes" in refused.value.by_field["file"][0]


def test_an_empty_document_is_refused(draft_payout: Payout, maker: StaffUser) -> None:
    with pytest.raises(PayoutInvalid) as refused:
        document_add(by=maker, payout=draft_payout, upload=upload("empty.pdf", b""))
    assert refused.value.by_field["file"] == ["empty.pdf is empty."]


def test_documents_become_base64_data_uris_for_the_upstream(
    draft_payout: Payout, maker: StaffUser
) -> None:
    document = document_add(
        by=maker, payout=draft_payout, upload=upload("a.pdf", PDF), kind="contract"
    )
    assert data_uri(document) == "data:application/pdf;base64," + base64.b64encode(PDF).decode()
    [item] = supporting_documents(draft_payout)
    assert item["type"] == "contract" and item["file_name"] == "a.pdf"
    assert item["file"].startswith("data:application/pdf;base64,")


def test_content_is_never_logged_or_audited(
    draft_payout: Payout, maker: StaffUser, caplog: pytest.LogCaptureFixture
) -> None:
    secret = b"%PDF-1.4 SECRET-INVOICE-CONTENT"
    with caplog.at_level(logging.DEBUG):
        document_add(by=maker, payout=draft_payout, upload=upload("a.pdf", secret))
    assert "SECRET-INVOICE-CONTENT" not in caplog.text
    entry = AuditEntry.objects.get(action="payout.document_added")
    assert "SECRET-INVOICE-CONTENT" not in str(entry.details)


def test_only_the_maker_adds_or_removes_and_only_while_draft(
    draft_payout: Payout,
    maker: StaffUser,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    from django.core.exceptions import PermissionDenied

    other = make_staff("finance_maker")
    with pytest.raises(PermissionDenied):
        document_add(by=other, payout=draft_payout, upload=upload("a.pdf", PDF))
    document = document_add(by=maker, payout=draft_payout, upload=upload("a.pdf", PDF))
    with pytest.raises(PermissionDenied):
        document_remove(by=other, document=document)
    Payout.objects.filter(pk=draft_payout.pk).update(status="pending_approval")
    with pytest.raises(PayoutInvalid):
        document_remove(by=maker, document=document)
    Payout.objects.filter(pk=draft_payout.pk).update(status="draft")
    storage, name = document.file.storage, document.file.name
    with django_capture_on_commit_callbacks(execute=True):
        document_remove(by=maker, document=document)
    assert not draft_payout.documents.exists()
    assert not storage.exists(name)
    assert AuditEntry.objects.filter(action="payout.document_removed").count() == 1
