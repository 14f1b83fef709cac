"""Chromium journey: an approver is told which supporting documents they have not opened, opens
one from the payout page (a download, never rendered in the page), and the page then shows them
as having opened it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import Page, expect

from gateway.services.environments import environment_switch
from payouts.drafts.documents import document_add
from payouts.models import Payout
from staff.models import StaffUser
from tests.finance import make_draft, make_environment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"


def test_an_approver_opens_the_documents_before_approving(
    page: Page,
    sign_in: Callable[..., None],
    demo_staff: dict[str, StaffUser],
    tmp_path: Path,
    settings: Any,
) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    maker, approver = demo_staff["finance_maker"], demo_staff["finance_approver"]
    environment = make_environment()
    environment_switch(user=approver, environment=environment)
    payout = make_draft(maker=maker, environment=environment)
    upload = SimpleUploadedFile("invoice-7.pdf", PDF, content_type="application/pdf")
    document = document_add(by=maker, payout=payout, upload=upload)
    Payout.objects.filter(pk=payout.pk).update(status="pending_approval", approvals_required=1)

    sign_in(page, approver.email)
    page.goto(f"/payouts/{payout.pk}/")
    note = page.get_by_test_id("documents-not-opened")
    expect(note).to_contain_text("invoice-7.pdf")
    expect(note).to_contain_text(document.sha256)
    expect(page.get_by_test_id("approve")).to_be_visible()

    panel = page.get_by_test_id("documents-panel")
    with page.expect_download() as download:
        panel.get_by_test_id("document-open").click()
    assert download.value.suggested_filename == "invoice-7.pdf"
    assert Path(download.value.path()).read_bytes() == PDF
    assert page.url.endswith(f"/payouts/{payout.pk}/")  # never rendered in the page

    page.reload()
    expect(page.get_by_test_id("documents-not-opened")).to_have_count(0)
    expect(page.get_by_test_id("document-opened-by")).to_contain_text(approver.email)
