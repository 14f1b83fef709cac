"""Supporting documents: content sniffing, limits, and the base64 data URIs the upstream takes.

A document's content is never logged: only its name, type, size and hash appear anywhere.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from payouts.models import Payout, PayoutDocument

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
