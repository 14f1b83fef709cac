"""Supporting documents: judged by content, limited in size, stored through storage, hashed."""

from __future__ import annotations

import base64
import hashlib
import logging
import struct
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from payouts.drafts.documents import data_uri, document_add, document_remove, supporting_documents
from payouts.errors import PayoutInvalid
from payouts.models import Payout
from staff.models import AuditEntry, StaffUser
from tests.finance import make_staff

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"


def png(width: int, height: int) -> bytes:
    """A PNG's signature and IHDR chunk (what a header-only reader sees), then padding."""
    ihdr = struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + ihdr + b"\x00" * 32


def jpeg(width: int, height: int) -> bytes:
    """SOI, an APP0 (JFIF) segment, then a baseline SOF0 frame header with the dimensions."""
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0\x00\x11\x08" + struct.pack(">HH", height, width) + b"\x03" + b"\x00" * 9
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


PNG = png(1200, 1600)
JPEG = jpeg(1200, 1600)
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


# --- safe to open: active PDFs and image bombs are refused ------------------------------------


def _refused(draft_payout: Payout, maker: StaffUser, name: str, content: bytes) -> str:
    with pytest.raises(PayoutInvalid) as refused:
        document_add(by=maker, payout=draft_payout, upload=upload(name, content))
    assert refused.value.code == "document_rejected"
    assert not draft_payout.documents.exists()
    return str(refused.value.errors[0].message)


@pytest.mark.parametrize(
    "dictionary",
    [
        b"<< /Type /Catalog /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >>",
        b"<< /Type /Catalog /AA << /O 2 0 R >> >>",
        b"<< /S /Launch /F (calc.exe) >>",
        b"<< /Names << /EmbeddedFiles 3 0 R >> >>",
        b"<< /Type /EmbeddedFile >>",
        b"<< /Subtype /RichMedia >>",
        b"<< /AcroForm << /XFA 4 0 R >> >>",
        b"<< /S /J#61vaScript /JS 5 0 R >>",  # a name spelled with a #xx escape
    ],
)
def test_a_pdf_with_active_content_is_refused_saying_why(
    draft_payout: Payout, maker: StaffUser, dictionary: bytes
) -> None:
    content = b"%PDF-1.7\n1 0 obj " + dictionary + b" endobj\ntrailer\n%%EOF\n"
    message = _refused(draft_payout, maker, "invoice.pdf", content)
    assert "active content" in message and "Approvers open these files" in message


def test_active_content_hidden_in_a_compressed_object_stream_is_found(
    draft_payout: Payout, maker: StaffUser
) -> None:
    hidden = zlib.compress(b"1 0 << /Type /Catalog /OpenAction 2 0 R >> 2 0 << /JS (x) >>")
    content = (
        b"%PDF-1.7\n3 0 obj << /Type /ObjStm /Filter /FlateDecode /Length "
        + str(len(hidden)).encode()
        + b" >>\nstream\n"
        + hidden
        + b"\nendstream\nendobj\ntrailer\n%%EOF\n"
    )
    message = _refused(draft_payout, maker, "invoice.pdf", content)
    assert "/JS" in message and "/OpenAction" in message


def test_a_plain_pdf_with_compressed_text_is_accepted(
    draft_payout: Payout, maker: StaffUser
) -> None:
    text = zlib.compress(b"BT /F1 12 Tf 72 712 Td (Invoice 42: AAA JSON) Tj ET")
    content = (
        b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"4 0 obj << /Filter /FlateDecode >>\nstream\n" + text + b"\nendstream\nendobj\n%%EOF\n"
    )
    document = document_add(by=maker, payout=draft_payout, upload=upload("invoice.pdf", content))
    assert document.content_type == "application/pdf"


def test_a_png_claiming_100000_by_100000_pixels_is_refused(
    draft_payout: Payout, maker: StaffUser
) -> None:
    message = _refused(draft_payout, maker, "scan.png", png(100_000, 100_000))
    assert "100,000 x 100,000 pixels" in message and "50,000,000" in message


def test_the_pixel_limit_is_a_setting_and_jpeg_headers_are_read(
    draft_payout: Payout,
    maker: StaffUser,
    settings,  # type: ignore[no-untyped-def]
) -> None:
    settings.PAYOUT_DOCUMENT_MAX_PIXELS = 1_000_000
    assert "1,200 x 1,600" in _refused(draft_payout, maker, "scan.jpg", jpeg(1200, 1600))
    document_add(by=maker, payout=draft_payout, upload=upload("scan.jpg", jpeg(800, 1000)))


@pytest.mark.parametrize(
    "content",
    [
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 32,  # no IHDR where it must be
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32,  # no frame header
    ],
)
def test_an_image_whose_header_cannot_be_read_is_refused(
    draft_payout: Payout, maker: StaffUser, content: bytes
) -> None:
    assert "header cannot be read" in _refused(draft_payout, maker, "scan.png", content)
