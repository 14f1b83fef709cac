"""The evidence pack of a paid payout, built against the emulator: the ZIP's files and manifest,
the report's facts (amounts, approvers and the second factor each used, the code masked, the
calls as the call log redacted them), and no secret in any file."""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction
from pypdf import PdfReader

from payouts.approval.policy import approval_policy_publish
from payouts.approval.services import payout_approve
from payouts.drafts.documents import document_open
from payouts.drafts.preview import payout_preview
from payouts.evidence.services import payout_evidence_pack
from payouts.models import Approval, ChangeSource, Payout, PayoutStatus
from payouts.release.code import payout_otp_confirm, payout_otp_send
from payouts.states import payout_transition
from payouts.tracking.events import payout_apply_event
from staff.models import AuditEntry, StaffUser
from staff.step_up import Proof, proof_attach
from tests.identity import stepped_up
from tests.payouts.live import PDF_BYTES, World, attach_pdf, build_world, crypto_payout

S = PayoutStatus


def paid_payout(world: World, staff: dict[str, StaffUser]) -> tuple[Payout, str]:
    """A fiat payout previewed, documented, approved by two people (one with a passkey), its
    code sent and entered, accepted by the upstream; and the code it was released with."""
    maker = staff["maker"]
    payout = Payout.objects.create(
        environment=world.environment,
        maker=maker,
        virtual_account=world.account,
        recipient=world.recipient,
        amount=Decimal("1234.56"),
        mode=world.account.mode,
        reference="INV-EVIDENCE-1",
        memo="March consulting",
    )
    payout = payout_preview(by=maker, payout=payout)
    attach_pdf(payout, by=maker, name="invoice-march.pdf")
    # A policy asking for two approvers, in force when the payout is submitted.
    approval_policy_publish(by=stepped_up(staff["admin"]), default_required=2, rules=[])
    with transaction.atomic():
        payout_transition(payout, S.PENDING_APPROVAL, source=ChangeSource.STAFF, by=maker)
    first, second = staff["approver"], staff["approver2"]
    document_open(by=first, payout=payout, document_pk=payout.documents.get().pk)
    payout_approve(payout=payout, by=first)
    proof_attach(  # the second approver verified a passkey at their step-up
        second,
        Proof(method="session", second_factor_at=world_now(), second_factor_method="passkey"),
    )
    payout_approve(payout=payout, by=second)
    payout_otp_send(payout=payout, by=first)
    code = world.otp_code()
    payout = payout_otp_confirm(payout=payout, by=first, code=code)
    assert payout.status == S.CREATED and payout.upstream_id
    # An event received (the flat payout.* shape the upstream sends).
    payout_apply_event(
        environment=world.environment,
        event_type="payout.processing",
        data={
            "event_id": "evt-evidence-1",
            "payout_id": payout.upstream_id,
            "status": "PROCESSING",
            "created_at": world_now().isoformat(),
        },
    )
    return Payout.objects.get(pk=payout.pk), code


def world_now() -> Any:
    from django.utils import timezone

    return timezone.now()


def read_pack(payout: Payout, by: StaffUser) -> tuple[dict[str, bytes], bytes]:
    pack = payout_evidence_pack(payout=payout, by=by)
    with pack.file:
        raw = pack.file.read()
    assert len(raw) == pack.size and hashlib.sha256(raw).hexdigest() == pack.sha256
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}, raw


def test_the_pack_holds_the_report_the_documents_and_a_manifest_that_checks(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout, code = paid_payout(world, staff)
    files, raw = read_pack(payout, staff["admin"])
    assert set(files) == {
        "evidence.pdf",
        "evidence.json",
        "SHA256SUMS",
        "documents/01-invoice-march.pdf",
    }
    assert files["documents/01-invoice-march.pdf"] == PDF_BYTES  # the document as stored
    facts = json.loads(files["evidence.json"])
    # The manifest in evidence.json, and SHA256SUMS (which covers evidence.json too), check out.
    assert set(facts["files"]) == set(files) - {"evidence.json", "SHA256SUMS"}
    for name, digest in facts["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == digest
    sums = dict(reversed(line.split("  ", 1)) for line in files["SHA256SUMS"].decode().splitlines())
    assert set(sums) == set(files) - {"SHA256SUMS"}
    for name, digest in sums.items():
        assert hashlib.sha256(files[name]).hexdigest() == digest
    assert facts["documents"][0]["unchanged_since_upload"] is True

    # The facts: amounts exact with currencies, every approval with its second factor.
    assert facts["payout"]["amount"] == "1234.56" and facts["payout"]["currency"] == "USD"
    preview = facts["preview"]
    assert preview["total_fees"] == str(payout.preview_total_fees)
    approvals = {a["approver"]: a for a in facts["approvals"]}
    assert approvals["approver@pay.test"]["second_factor_method"] == "totp"
    assert approvals["approver2@pay.test"]["second_factor_method"] == "passkey"
    assert approvals["approver@pay.test"]["documents_opened"] == 1
    assert all(a["second_factor_verified_at"] for a in approvals.values())
    release = facts["release"]
    assert release["confirmed_by"] == "approver@pay.test" and release["code"] == "••••••"
    assert release["second_factor_method"] == "totp"
    operations = [call["operation"] for call in facts["upstream_calls"]]
    assert {"payout_preview", "otp_send", "payout_initiate"} <= set(operations)
    initiation = next(c for c in facts["upstream_calls"] if c["operation"] == "payout_initiate")
    assert initiation["idempotency_key"] == str(payout.idempotency_key)
    assert "[redacted]" in initiation["request_body"]  # the document's content, as logged
    assert [e["event_id"] for e in facts["events"]] == ["evt-evidence-1"]
    assert facts["events"][0]["event_type"] == "payout.processing"
    assert facts["timeline"][-1]["status"] == "Processing"

    # The report says the same to a person.
    text = "\n".join(
        page.extract_text() for page in PdfReader(io.BytesIO(files["evidence.pdf"])).pages
    )
    flat = " ".join(text.split())
    for fact in (
        f"Evidence pack: payout #{payout.pk}",
        "INV-EVIDENCE-1",
        "1,234.56 USD",
        f"{Decimal(preview['total']):,f} USD",
        "approver@pay.test",
        "approver2@pay.test",
        "Authenticator app (TOTP)",
        "Passkey",
        "invoice-march.pdf",
        hashlib.sha256(PDF_BYTES).hexdigest()[:16],
        "payout_initiate",
        "otp_send",
        "payout.processing",
        "evt-evidence-1",
        "Page 1 of",
    ):
        assert fact in flat, fact

    # No secret in any file: the code, the document's content as sent, the webhook or API secrets.
    environment = world.environment
    secrets = [
        code.encode(),
        b"base64,",
        environment.password.encode(),
        environment.api_key.encode(),
    ]
    for name, content in files.items():
        readable = content
        if name == "evidence.pdf":
            readable = text.encode()
        for secret in secrets:
            assert secret not in readable, (name, secret)
    assert code not in json.dumps(facts)

    # The download is audited with the ZIP's SHA-256.
    entry = AuditEntry.objects.get(action="payout.evidence_downloaded")
    assert entry.actor == staff["admin"] and entry.target_id == str(payout.pk)
    assert entry.details["sha256"] == hashlib.sha256(raw).hexdigest()

    if os.environ.get("PAYOPS_EVIDENCE_SAMPLE"):  # to look at it: render the pages to PNG
        with open(os.environ["PAYOPS_EVIDENCE_SAMPLE"], "wb") as sample:
            sample.write(files["evidence.pdf"])


def test_each_approval_records_the_second_factor_behind_it(
    world: World, staff: dict[str, StaffUser]
) -> None:
    payout, _ = paid_payout(world, staff)
    methods = dict(
        Approval.objects.filter(payout=payout).values_list(
            "approver__email", "second_factor_method"
        )
    )
    assert methods == {"approver@pay.test": "totp", "approver2@pay.test": "passkey"}
    assert not Approval.objects.filter(payout=payout, second_factor_at__isnull=True).exists()


@pytest.mark.parametrize("role", ["maker", "approver"])
def test_only_evidence_readers_build_the_pack(
    world: World, staff: dict[str, StaffUser], role: str
) -> None:
    payout, _ = paid_payout(world, staff)
    from django.core.exceptions import PermissionDenied

    if role == "maker":
        with pytest.raises(PermissionDenied):
            payout_evidence_pack(payout=payout, by=staff["maker"])
        assert not AuditEntry.objects.filter(action="payout.evidence_downloaded").exists()
    else:
        files, _ = read_pack(payout, staff["approver"])
        assert "evidence.pdf" in files


@pytest.fixture
def crypto_world(
    transactional_db: None,
    request: pytest.FixtureRequest,
    staff: dict[str, StaffUser],
    q_sync: None,
) -> World:
    emulator = request.getfixturevalue("live_emulator")
    environment = request.getfixturevalue("sandbox")
    return build_world(emulator, environment, recipient_creator=staff["maker"], mode="crypto")


def test_a_crypto_payouts_pack_says_no_code_released_it(
    crypto_world: World, staff: dict[str, StaffUser]
) -> None:
    payout = crypto_payout(crypto_world, maker=staff["maker"])
    payout_approve(payout=payout, by=staff["approver"])  # the last approval sends it
    payout = Payout.objects.get(pk=payout.pk)
    assert payout.upstream_id
    files, _ = read_pack(payout, staff["approver"])
    facts = json.loads(files["evidence.json"])
    release = facts["release"]
    assert release["needs_code"] is False and release["code"] == "" and release["codes_sent"] == []
    assert release["sent_upstream_by"] == "approver@pay.test"
    assert facts["payout"]["payment_instructions"] == {"network": "solana", "currency": "USDC"}
    assert "payout_initiate" in [c["operation"] for c in facts["upstream_calls"]]
    text = " ".join(
        " ".join(
            page.extract_text() for page in PdfReader(io.BytesIO(files["evidence.pdf"])).pages
        ).split()
    )
    assert "a crypto payout is released by its last approval" in text
    assert "funded in USDC on solana" in text
