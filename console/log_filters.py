"""Logging filters of the shell: a refused request (4xx) is one line in the log, not a traceback."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime


class OneLineClientErrors(logging.Filter):
    """
    Django logs a PermissionDenied (403) or a SuspiciousOperation (400) with the exception's
    traceback attached, which in the `make run` terminal looks exactly like a crash. A refused
    request is expected behaviour: keep the line, add the reason, drop the traceback. Server
    errors (5xx) keep theirs.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500 and record.exc_info:
            exception = record.exc_info[1]
            reason = str(exception) if exception is not None else ""
            if reason:
                # The message is a %-format string with args: keep any % in the reason literal.
                record.msg = f"{record.msg} ({reason.replace('%', '%%')})"
            record.exc_info = None
            record.exc_text = None
        return True


class RequestIdFilter(logging.Filter):
    """Stamp each record with the current request's (or task's) id: `%(request_id)s`."""

    def filter(self, record: logging.LogRecord) -> bool:
        from console.middleware import current_request_id

        if not getattr(record, "request_id", ""):
            record.request_id = current_request_id()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line (PAYOPS_LOG_FORMAT=json): time, level, logger, message, request
    id, and the exception's text. Messages are what the code logs, so the redaction rules of the
    code that logs them hold (staff.redaction: secrets are never in a message)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", ""),
            "process": record.process,
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)
