"""The capture store's part: a finished exchange's capture record, when it made one, is written."""

from __future__ import annotations

from ..capture import Capturer
from ..exchange import Exchange


class CaptureKeeper:
    """Hands the capture record of every exchange that made one to the capture store."""

    def __init__(self, store: Capturer) -> None:
        self.store = store

    def finished(self, exchange: Exchange) -> None:
        if exchange.capture is not None:
            self.store.submit(exchange.capture)
