"""Logging filters of the shell: a refused request (4xx) is one line in the log, not a traceback."""

from __future__ import annotations

import logging


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
