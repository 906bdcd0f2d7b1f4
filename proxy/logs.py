"""Structured logging: stdlib ``logging`` with one JSON object per line (``log_format: json``), or
one readable ``key=value`` line per event (``log_format: text``, for a terminal).

Log calls pass their fields as ``extra={"fields": {...}}``; the formatter writes them next to
the timestamp, level, logger and event. Callers never pass headers or bodies, so no secret can
reach a log line.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from typing import Any

import orjson

access_log = logging.getLogger("suture.access")
repair_log = logging.getLogger("suture.repair")
upstream_log = logging.getLogger("suture.upstream")


# How Starlette reports a failed lifespan to uvicorn, which logs it as the message: traceback text.
_TRACEBACK_TEXT = "Traceback (most recent call last):"


class JsonFormatter(logging.Formatter):
    """Render a record as one JSON line: ts, level, logger, event, then the record's fields.

    An exception is the field ``error``, ``"Type: message"``; its ``traceback`` is added only
    when the configured ``level`` is ``debug``.
    """

    def __init__(self, level: str = "info") -> None:
        super().__init__()
        self.tracebacks = level.lower() == "debug"

    def format(self, record: logging.LogRecord) -> str:
        event = record.getMessage().rstrip()  # uvicorn's "Exception in ASGI application\n"
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": event,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info and record.exc_info[0] is not None:
            kind, exc, tb = record.exc_info
            line["error"] = f"{kind.__name__}: {exc}"
            if self.tracebacks:
                line["traceback"] = "".join(traceback.format_exception(kind, exc, tb))
        elif event.startswith(_TRACEBACK_TEXT):
            # Its last unindented line is the exception's own "Type: message".
            last = [text for text in event.splitlines() if text and not text[0].isspace()][-1]
            line["event"], line["error"] = "unhandled exception", last
            if self.tracebacks:
                line["traceback"] = event
        return orjson.dumps(line, default=str).decode()


class TextFormatter(JsonFormatter):
    """The same line as :class:`JsonFormatter`, for people: ``ts level logger event key=value...``.

    Fields without a value are left out; a value with spaces or quotes is quoted; a traceback
    (``log_level: debug``) follows on its own lines."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = orjson.loads(super().format(record))
        ts, level, logger, event = line.pop("ts"), line.pop("level"), line.pop("logger"), line.pop("event")
        trace = line.pop("traceback", None)
        text = f"{ts} {level.upper():<7} {logger} {event}"
        for key, value in line.items():
            if value is not None:
                text += f" {key}={_text_value(value)}"
        return text if trace is None else f"{text}\n{trace.rstrip()}"


def _text_value(value: Any) -> str:
    if isinstance(value, str):
        return value if value and not any(c in value for c in ' "=\n\\') else orjson.dumps(value).decode()
    if isinstance(value, bool | int | float):
        return orjson.dumps(value).decode()
    return orjson.dumps(value, default=str).decode()


def configure_logging(level: str = "info", log_format: str = "json") -> None:
    """Send every log record (Suture's and uvicorn's) to stderr, one line each (JSON or text);
    tracebacks at debug."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TextFormatter(level) if log_format == "text" else JsonFormatter(level))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


def log(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    logger.log(level, event, extra={"fields": fields})
