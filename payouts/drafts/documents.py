"""Supporting documents: content sniffing, limits, adding and removing them on a draft, and the
base64 data URIs the upstream takes.

A document's content is never logged: only its name, type, size and hash appear anywhere.

Approvers open these files before they approve, so a document must be safe to open:
- a PDF with active content (JavaScript, actions run on opening, launched programs, embedded
  files, rich media, XFA forms) is refused, not sanitised: an invoice needs none of it, and a
  refusal the maker can act on (print to PDF again) is simpler and safer than rewriting a PDF;
- an image whose header claims more than `PAYOUT_DOCUMENT_MAX_PIXELS` pixels is refused before
  anything decodes it (a decompression bomb for the approver's viewer, or our own), and one
  whose header cannot be read at all is refused too.
"""

from __future__ import annotations

import base64
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext

from payouts.drafts.services import require_own_draft
from payouts.errors import PayoutInvalid
from payouts.models import DocumentKind, Payout, PayoutDocument, PayoutDocumentView
from payouts.selectors import require_payout_reader
from staff.actions import record_action
from staff.models import StaffUser

# Magic bytes of the types a setting may allow: (type, extension, signature, offset).
SIGNATURES: tuple[tuple[str, str, bytes, int], ...] = (
    ("application/pdf", ".pdf", b"%PDF-", 0),
    ("image/png", ".png", b"\x89PNG\r\n\x1a\n", 0),
    ("image/jpeg", ".jpg", b"\xff\xd8\xff", 0),
    ("image/gif", ".gif", b"GIF8", 0),
    ("image/webp", ".webp", b"WEBP", 8),
)
SNIFF_BYTES = 16


class DocumentRejected(Exception):
    """The upload is not an acceptable document; the message says why, for the maker."""


@dataclass(frozen=True)
class CheckedDocument:
    content: bytes
    content_type: str
    extension: str
    file_name: str


def sniff(head: bytes) -> tuple[str, str] | None:
    """The (content type, extension) the bytes say, or None if no known signature matches."""
    for content_type, extension, signature, offset in SIGNATURES:
        if head[offset : offset + len(signature)] == signature:
            if content_type == "image/webp" and head[:4] != b"RIFF":
                continue
            return content_type, extension
    return None


# --- active content in PDFs ------------------------------------------------------------------

# PDF names that make a document do something when opened or read (ISO 32000: JavaScript and
# its `/JS` action, `/OpenAction` and `/AA` additional actions, `/Launch`, embedded files,
# RichMedia, XFA forms).
ACTIVE_PDF_NAMES = frozenset(
    {
        "JavaScript",
        "JS",
        "OpenAction",
        "AA",
        "Launch",
        "EmbeddedFile",
        "EmbeddedFiles",
        "RichMedia",
        "XFA",
    }
)
_PDF_NAME = re.compile(rb"/([^\s/<>\[\]()%{}]+)")
_PDF_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_STREAM = re.compile(rb"(?<!end)stream\r?\n")
# Decompressed bytes scanned per document at most (a small PDF inflating to more is refused).
INFLATE_LIMIT = 32 * 1024 * 1024


def _names(data: bytes) -> set[str]:
    """The PDF names in `data`, with `#xx` escapes decoded (`/J#61vaScript` is `/JavaScript`)."""
    found = set()
    for match in _PDF_NAME.finditer(data):
        raw = _PDF_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), match.group(1))
        found.add(raw.decode("latin-1"))
    return found


def _inflated_streams(content: bytes) -> list[bytes]:
    """Every stream that inflates as zlib (FlateDecode: object streams, where a dictionary may
    hide), within INFLATE_LIMIT in all; DocumentRejected past it."""
    budget = INFLATE_LIMIT
    inflated = []
    for match in _STREAM.finditer(content):
        start = match.end()
        end = content.find(b"endstream", start)
        if end < 0:
            end = len(content)
        inflater = zlib.decompressobj()
        try:
            data = inflater.decompress(content[start:end], budget + 1)
        except zlib.error:
            continue  # not Flate (or damaged): its raw bytes were scanned already
        if len(data) > budget or inflater.unconsumed_tail:
            raise DocumentRejected("it inflates to more than a supporting document should.")
        budget -= len(data)
        inflated.append(data)
    return inflated


def pdf_active_content(content: bytes) -> list[str]:
    """The active-content names a PDF holds, in its raw bytes or its Flate streams (sorted)."""
    names = _names(content)
    for data in _inflated_streams(content):
        names |= _names(data)
    return sorted(names & ACTIVE_PDF_NAMES)


# --- image dimensions, from the header only --------------------------------------------------


def _png_size(content: bytes) -> tuple[int, int] | None:
    if content[12:16] != b"IHDR" or len(content) < 24:
        return None
    width, height = struct.unpack(">II", content[16:24])
    return width, height


# JPEG start-of-frame markers (baseline, progressive, lossless...): not DHT, JPG, DAC.
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(content: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(content):
        if content[at] != 0xFF:
            return None
        marker = content[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", content[at + 2 : at + 4])
        if marker in _SOF:
            if at + 9 > len(content):
                return None
            height, width = struct.unpack(">HH", content[at + 5 : at + 9])
            return width, height
        if marker == 0xDA or length < 2:  # image data before any frame header
            return None
        at += 2 + length
    return None


def _gif_size(content: bytes) -> tuple[int, int] | None:
    if len(content) < 10:
        return None
    width, height = struct.unpack("<HH", content[6:10])
    return width, height


def _webp_size(content: bytes) -> tuple[int, int] | None:
    chunk = content[12:16]
    if chunk == b"VP8X" and len(content) >= 30:
        width = int.from_bytes(content[24:27], "little") + 1
        height = int.from_bytes(content[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 " and len(content) >= 30:
        width, height = struct.unpack("<HH", content[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(content) >= 25:
        bits = int.from_bytes(content[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


IMAGE_SIZE = {
    "image/png": _png_size,
    "image/jpeg": _jpeg_size,
    "image/gif": _gif_size,
    "image/webp": _webp_size,
}


def image_size(content_type: str, content: bytes) -> tuple[int, int] | None:
    """(width, height) an image's header states, without decoding it; None if unreadable."""
    read = IMAGE_SIZE.get(content_type)
    size = read(content) if read else None
    return size if size and size[0] > 0 and size[1] > 0 else None


def _check_content(name: str, content_type: str, content: bytes) -> None:
    """Refuse what is unsafe to open: active PDFs, images too large or without a readable
    header (DocumentRejected saying why)."""
    if content_type == "application/pdf":
        try:
            active = pdf_active_content(content)
        except DocumentRejected as exc:
            raise DocumentRejected(f"{name}: {exc}") from None
        if active:
            raise DocumentRejected(
                f"{name} contains active content ({', '.join('/' + a for a in active)}). "
                "Approvers open these files, so PDFs with scripts, actions, embedded files or "
                "forms are refused: print or export it to a plain PDF and upload that."
            )
        return
    size = image_size(content_type, content)
    if size is None:
        raise DocumentRejected(f"{name}: its image header cannot be read; upload it again.")
    limit = int(settings.PAYOUT_DOCUMENT_MAX_PIXELS)
    width, height = size
    if width * height > limit:
        raise DocumentRejected(
            f"{name} claims {width:,} x {height:,} pixels; the limit is {limit:,} pixels. "
            "Scan or export it at a lower resolution."
        )


def _labels(types: list[str]) -> str:
    return ", ".join(t.split("/")[-1].upper() for t in types)


def check_upload(upload: UploadedFile) -> CheckedDocument:
    """Reject empty, oversize and wrong-type uploads, whatever their name claims."""
    allowed = list(settings.PAYOUT_DOCUMENT_TYPES)
    limit = int(settings.PAYOUT_DOCUMENT_MAX_BYTES)
    name = PurePath(upload.name or "document").name[:255]
    size = upload.size or 0
    if size > limit:
        raise DocumentRejected(f"{name} is {size:,} bytes; the limit is {limit:,} bytes.")
    upload.seek(0)
    content = upload.read(limit + 1)
    if not content:
        raise DocumentRejected(f"{name} is empty.")
    if len(content) > limit:
        raise DocumentRejected(f"{name} is larger than the limit of {limit:,} bytes.")
    detected = sniff(content[:SNIFF_BYTES])
    if detected is None or detected[0] not in allowed:
        what = detected[0] if detected else "not a recognised document"
        raise DocumentRejected(
            f"{name}: its content is {what}, whatever its name says; accepted: {_labels(allowed)}."
        )
    _check_content(name, detected[0], content)
    return CheckedDocument(
        content=content, content_type=detected[0], extension=detected[1], file_name=name
    )


def data_uri(document: PayoutDocument) -> str:
    """`data:<type>;base64,<content>` of a stored document, read through the storage API."""
    with document.file.open("rb") as handle:
        encoded = base64.b64encode(handle.read()).decode("ascii")
    return f"data:{document.content_type};base64,{encoded}"


def supporting_documents(payout: Payout) -> list[dict[str, Any]]:
    """The payout body's `supporting_documents` (decisions.md 2): type, file_name, file."""
    return [
        {"type": document.kind, "file_name": document.file_name, "file": data_uri(document)}
        for document in payout.documents.all()
    ]


# What the audit trail keeps of a document (never its content).
ADDED_FACTS = ("file_name", "content_type", "size", "sha256")
REMOVED_FACTS = ("file_name", "sha256")


def _document_audit(
    by: StaffUser, payout: Payout, document: PayoutDocument, action: str, facts: tuple[str, ...]
) -> None:
    details = {"document": document.pk, **{name: getattr(document, name) for name in facts}}
    record_action(actor=by, action=action, target=payout, details=details)


def document_add(
    *, by: StaffUser, payout: Payout, upload: UploadedFile, kind: str = "invoice"
) -> PayoutDocument:
    """Check the upload by its content, store it through the storage API, hash it."""
    require_own_draft(by, payout)
    try:
        checked = check_upload(upload)
    except DocumentRejected as exc:
        raise PayoutInvalid({"file": [str(exc)]}, code="document_rejected") from exc
    if kind not in DocumentKind.values:
        raise PayoutInvalid(
            {"kind": [gettext("One of: %(value)s.") % {"value": ", ".join(DocumentKind.values)}]}
        )
    with transaction.atomic():
        locked = Payout.objects.select_for_update().get(pk=payout.pk)
        require_own_draft(by, locked)
        document = PayoutDocument(
            payout=locked,
            kind=kind,
            file_name=checked.file_name,
            content_type=checked.content_type,
            size=len(checked.content),
            sha256=PayoutDocument.digest(checked.content),
            uploaded_by=by,
        )
        document.file.save(f"document{checked.extension}", ContentFile(checked.content), save=False)
        stored = str(document.file.name)
        try:
            document.save()
            _document_audit(by, locked, document, "payout.document_added", ADDED_FACTS)
        except Exception:
            document.file.storage.delete(stored)  # nothing half done: no orphan file
            raise
    return document


def document_remove(*, by: StaffUser, document: PayoutDocument) -> None:
    """Remove a document while its payout is a draft (its maker only)."""
    with transaction.atomic():
        payout = Payout.objects.select_for_update().get(pk=document.payout_id)
        require_own_draft(by, payout)
        storage, name = document.file.storage, str(document.file.name)
        _document_audit(by, payout, document, "payout.document_removed", REMOVED_FACTS)
        document.delete()
        transaction.on_commit(lambda: storage.delete(name))


# --- reading: who may open a payout's documents, and the record that they did ---------------


def document_open(*, by: StaffUser, payout: Payout, document_pk: int) -> PayoutDocument:
    """
    A document of `payout` for a person who may read the payout (PermissionDenied otherwise;
    Http404 when the payout has no such document): their opening is recorded (first and last
    time, `PayoutDocumentView`) and audited (`payout.document_viewed`, with the document's name
    and hash, never its content), in one transaction.
    """
    require_payout_reader(by)
    document = PayoutDocument.objects.filter(payout=payout, pk=document_pk).first()
    if document is None:
        raise Http404("This payout has no such document.")
    with transaction.atomic():
        view, created = PayoutDocumentView.objects.select_for_update().get_or_create(
            document=document, viewer=by
        )
        if not created:
            view.last_viewed_at = timezone.now()
            view.save(update_fields=["last_viewed_at"])
        _document_audit(by, payout, document, "payout.document_viewed", REMOVED_FACTS)
    return document


def documents_opened_by(payout: Payout) -> dict[int, set[int]]:
    """viewer id -> the ids of this payout's documents they opened (reads the prefetched
    `documents` and their `views` when present)."""
    opened: dict[int, set[int]] = {}
    for document in payout.documents.all():
        for view in document.views.all():
            opened.setdefault(view.viewer_id, set()).add(document.pk)
    return opened
