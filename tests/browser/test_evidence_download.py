"""Chromium journey: an admin downloads a payout's evidence pack from the payout page; the ZIP
holds the report, the document and the manifest, and the page stays where it was."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from payouts.drafts.documents import document_add
from staff.models import StaffUser
from tests.finance import make_draft, make_environment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"


def test_an_admin_downloads_the_evidence_pack_from_the_payout_page(
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    tmp_path: Path,
    settings: Any,
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    maker, admin = demo_staff["finance_maker"], demo_staff["admin"]
    environment = make_environment()
    environment_switch(user=admin, environment=environment)
    payout = make_draft(maker=maker, environment=environment, reference="INV-77")
    upload = SimpleUploadedFile("invoice-77.pdf", PDF, content_type="application/pdf")
    document_add(by=maker, payout=payout, upload=upload)

    sign_in(page, admin.email)
    page.goto(f"/payouts/{payout.pk}/")
    button = page.get_by_test_id("evidence-download")
    expect(button).to_have_text("Download evidence pack (ZIP)")
    with page.expect_download() as download:
        button.click()
    assert download.value.suggested_filename.startswith(f"payout-{payout.pk}-evidence-")
    content = Path(download.value.path()).read_bytes()
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        names = set(archive.namelist())
        facts = json.loads(archive.read("evidence.json"))
        assert archive.read("documents/01-invoice-77.pdf") == PDF
    assert {"evidence.pdf", "evidence.json", "SHA256SUMS"} <= names
    assert facts["payout"]["reference"] == "INV-77" and facts["generated_by"] == admin.email
    assert page.url.endswith(f"/payouts/{payout.pk}/")
