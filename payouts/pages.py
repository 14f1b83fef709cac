"""What every payout page shares: the payout a URL names, in the person's environment, or 404."""

from __future__ import annotations

from pathlib import PurePath

from django.http import FileResponse, Http404, HttpRequest

from gateway.selectors import environment_current
from payouts import selectors
from payouts.models import Payout, PayoutDocument


def payout_of_request(request: HttpRequest, pk: int) -> Payout:
    """The payout `pk` of the environment the person works in (404 elsewhere)."""
    try:
        return selectors.payout_detail(environment=environment_current(user=request.user), pk=pk)
    except Payout.DoesNotExist:
        raise Http404("No such payout in this environment.") from None


# The extension a document's (sniffed) type is saved with, for its download name.
EXTENSIONS = {
    "application/pdf": ".pdf",
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


def document_file_response(document: PayoutDocument) -> FileResponse:
    """
    A supporting document as a download, never rendered in our origin (docs/payouts.md): an
    attachment, under its uploaded name with the extension of its real type, with the type its
    content showed, `nosniff`, a sandboxing Content-Security-Policy (should a browser render it
    anyway, nothing in it runs or reaches our pages) and no caching.
    """
    name = PurePath(document.file_name)
    wanted = EXTENSIONS.get(document.content_type, "")
    fitting = {".jpg", ".jpeg"} if wanted == ".jpg" else {wanted}
    if wanted and name.suffix.lower() not in fitting:
        name = name.with_name(name.name + wanted)
    response = FileResponse(
        document.file.open("rb"),
        as_attachment=True,
        filename=name.name,
        content_type=document.content_type,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, no-store"
    return response
