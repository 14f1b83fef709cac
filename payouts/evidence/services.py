"""Build a payout's evidence pack (a ZIP in a temporary file) for someone allowed to read it."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from typing import IO, Any

from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from payouts.evidence.facts import evidence_facts
from payouts.evidence.pdf import evidence_pdf_write
from payouts.models import Payout
from staff.audit import audit_record
from staff.models import StaffUser
from staff.roles import PAYOUT_EVIDENCE_VIEW

CHUNK = 1024 * 1024


def can_download_evidence(user: StaffUser) -> bool:
    return bool(user.has_perm(PAYOUT_EVIDENCE_VIEW))


@dataclass
class EvidencePack:
    """The ZIP, open at its start (the caller streams it and closes it: the file goes then)."""

    file: IO[bytes]
    filename: str
    size: int
    sha256: str


class _Hashing:
    """A writable that passes bytes on and hashes them as they go."""

    def __init__(self, target: IO[bytes]) -> None:
        self.target = target
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self.target.write(data)


def _add(archive: zipfile.ZipFile, name: str, source: IO[bytes]) -> str:
    """Copy `source` into the archive under `name` in chunks; its SHA-256."""
    with archive.open(name, "w", force_zip64=True) as entry:
        hashing = _Hashing(entry)
        shutil.copyfileobj(source, hashing, CHUNK)
    return hashing.digest.hexdigest()


def _add_bytes(archive: zipfile.ZipFile, name: str, data: bytes) -> str:
    archive.writestr(name, data)
    return hashlib.sha256(data).hexdigest()


def _archive_write(archive: zipfile.ZipFile, payout: Payout, facts: dict[str, Any]) -> int:
    """The documents as stored, evidence.pdf, evidence.json and SHA256SUMS; how many files."""
    manifest: dict[str, str] = {}
    for document, described in zip(
        payout.documents.order_by("uploaded_at", "pk"), facts["documents"], strict=True
    ):
        with document.file.open("rb") as stored:
            digest = _add(archive, described["file_in_pack"], stored)
        manifest[described["file_in_pack"]] = digest
        described["sha256_in_pack"] = digest
        described["unchanged_since_upload"] = digest == document.sha256
    with tempfile.TemporaryFile() as pdf:
        evidence_pdf_write(facts, pdf)
        pdf.seek(0)
        manifest["evidence.pdf"] = _add(archive, "evidence.pdf", pdf)
    facts["files"] = dict(sorted(manifest.items()))
    facts["files_note"] = (
        "SHA-256 of every other file in this ZIP; SHA256SUMS also covers evidence.json."
    )
    document_json = json.dumps(facts, indent=2, ensure_ascii=False, cls=DjangoJSONEncoder)
    manifest["evidence.json"] = _add_bytes(archive, "evidence.json", document_json.encode())
    sums = "".join(f"{digest}  {name}\n" for name, digest in sorted(manifest.items()))
    _add_bytes(archive, "SHA256SUMS", sums.encode())
    return len(manifest) + 1


def _sha256_of(pack: IO[bytes]) -> str:
    """The SHA-256 of the whole file, read in chunks, left at its start."""
    pack.seek(0)
    whole = hashlib.sha256()
    for block in iter(lambda: pack.read(CHUNK), b""):
        whole.update(block)
    pack.seek(0)
    return whole.hexdigest()


def payout_evidence_pack(*, payout: Payout, by: StaffUser) -> EvidencePack:
    """
    The evidence pack of `payout` for `by` (PermissionDenied without `payouts.view_evidence`):
    a ZIP with evidence.pdf (the report), the supporting documents as stored, evidence.json (the
    same facts, plus the SHA-256 of the PDF and of every document) and SHA256SUMS (every file,
    evidence.json included). Written to a temporary file, documents copied in chunks, never all
    in memory. The download is audited (`payout.evidence_downloaded`, with the ZIP's SHA-256).
    """
    if not can_download_evidence(by):
        raise PermissionDenied(
            gettext("Only finance approvers, admins and auditors download evidence.")
        )
    now = timezone.now()
    facts = evidence_facts(payout, by=by, now=now)
    pack = tempfile.TemporaryFile()  # noqa: SIM115 (the response closes it once streamed)
    try:
        with zipfile.ZipFile(pack, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            files = _archive_write(archive, payout, facts)
        size = pack.tell()
        details: dict[str, Any] = {"sha256": _sha256_of(pack), "size": size, "files": files}
        with transaction.atomic():
            audit_record(
                actor=by, action="payout.evidence_downloaded", target=payout, details=details
            )
    except BaseException:
        pack.close()
        raise
    return EvidencePack(
        file=pack,
        filename=f"payout-{payout.pk}-evidence-{now:%Y%m%dT%H%M%SZ}.zip",
        size=size,
        sha256=details["sha256"],
    )
