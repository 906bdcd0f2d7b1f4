"""Structured logging: stdlib ``logging`` with one JSON object per line.

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


class JsonFormatter(logging.Formatter):
    """Render a record as one JSON line: ts, level, logger, event, then the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info and record.exc_info[0] is not None:
            line["error"] = f"{record.exc_info[0].__name__}: {record.exc_info[1]}"
            line["traceback"] = "".join(traceback.format_tb(record.exc_info[2]))
        return orjson.dumps(line, default=str).decode()


def configure_logging(level: str = "info") -> None:
    """Send every log record (Suture's and uvicorn's) to stderr as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


def log(logger: logging.Logger, level: int, event: str, **fields: Any) -> None:
    logger.log(level, event, extra={"fields": fields})
