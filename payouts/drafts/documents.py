"""Supporting documents: content sniffing, limits, adding and removing them on a draft, and the
base64 data URIs the upstream takes.

A document's content is never logged: only its name, type, size and hash appear anywhere.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from payouts.drafts.services import require_own_draft
from payouts.errors import PayoutInvalid
from payouts.models import DocumentKind, Payout, PayoutDocument
from staff.models import StaffUser
from staff.services import audit_record

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
    audit_record(actor=by, action=action, target=payout, details=details)


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
        raise PayoutInvalid({"kind": [f"One of: {', '.join(DocumentKind.values)}."]})
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
