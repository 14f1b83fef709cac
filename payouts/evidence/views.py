"""The evidence pack's download on the payout page."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest
from django.utils.translation import gettext

from payouts.evidence.services import EvidencePack, can_download_evidence, payout_evidence_pack
from payouts.pages import payout_of_request
from staff.requests import staff_of


def evidence_response(pack: EvidencePack) -> FileResponse:
    """The ZIP as a download, streamed from its temporary file, never cached."""
    response = FileResponse(
        pack.file, as_attachment=True, filename=pack.filename, content_type="application/zip"
    )
    response["Content-Length"] = str(pack.size)
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
def evidence_download_view(request: HttpRequest, pk: int) -> FileResponse:
    """GET /payouts/<pk>/evidence/: the payout's evidence pack (payouts.view_evidence)."""
    user = staff_of(request)
    if not can_download_evidence(user):  # 403 before anything is looked up
        raise PermissionDenied(
            gettext("Only finance approvers, admins and auditors download evidence.")
        )
    payout = payout_of_request(request, pk)
    return evidence_response(payout_evidence_pack(payout=payout, by=user))
