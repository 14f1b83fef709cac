"""GET /api/v1/payouts/{id}/evidence: the payout's evidence pack, the same ZIP as the page's."""

from __future__ import annotations

from django.http import FileResponse, HttpRequest
from ninja import Router

from console.api_permissions import needs
from console.api_schemas import ERROR_RESPONSES
from gateway.api_support import EnvironmentName, acting_staff
from payouts.api_support import payout_found
from payouts.evidence.services import payout_evidence_pack
from payouts.evidence.views import evidence_response
from staff import roles

router = Router(tags=["payouts"])


@router.get(
    "/payouts/{payout_id}/evidence",
    response=ERROR_RESPONSES,
    operation_id="payouts_api_download_evidence",
    openapi_extra={
        "responses": {
            "200": {
                "description": "A ZIP: evidence.pdf (the report), the supporting documents as "
                "stored, evidence.json (the same facts with the SHA-256 of each file) and "
                "SHA256SUMS. The download is audited (`payout.evidence_downloaded`).",
                "content": {"application/zip": {}},
            }
        }
    },
)
@needs(roles.PAYOUT_EVIDENCE_VIEW)
def download_evidence(
    request: HttpRequest, payout_id: int, environment: str | None = EnvironmentName
) -> FileResponse:
    """The payout's evidence pack ("why was this paid"), for `payouts.view_evidence`."""
    payout = payout_found(request, payout_id, environment)
    return evidence_response(payout_evidence_pack(payout=payout, by=acting_staff(request)))
