"""Every secret Suture holds, and its removal from whatever Suture sends out of itself.

Providers quote the credential they were given ("Incorrect API key provided: sk-..."), so an
answer relayed as it came would hand Suture's own upstream key to any client that can make the
provider fail. One registry, fed by every place a key is loaded (the built-in sections, the
named upstreams' ``api_key_env``, the egress proxy's password), is what relays, litellm's error
texts and captures redact from.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

# Shorter values match ordinary words: nobody configures a key this short.
MIN_SECRET_LENGTH = 8
REDACTED = "[redacted]"


class Secrets:
    """A fixed set of secret values; redaction in text (``[redacted]``) and in relayed bytes.

    Relayed bytes are masked with as many ``*`` as the secret has bytes, so a Content-Length
    stays true and a relay never has to buffer a body to redact it.
    """

    def __init__(self, values: Iterable[str]) -> None:
        kept = {v for v in values if len(v) >= MIN_SECRET_LENGTH}
        # Longest first: a key that contains another is masked whole.
        self.values: tuple[str, ...] = tuple(sorted(kept, key=len, reverse=True))
        self._encoded = tuple((v.encode(), b"*" * len(v.encode())) for v in self.values)

    def __bool__(self) -> bool:
        return bool(self.values)

    def with_values(self, values: Iterable[str]) -> Secrets:
        """These secrets and ``values`` (a request's own credentials, say)."""
        return Secrets([*self.values, *values])

    def redact_text(self, text: str) -> str:
        for secret in self.values:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def redact_quoted(self, text: str) -> str:
        """``text``, a provider's words, with these secrets and any key-shaped word redacted: a
        provider quotes the key it refused, and a key of the client's own may be in no registry."""
        return _KEY_SHAPES.sub(REDACTED, self.redact_text(text))

    def mask(self, data: bytes) -> bytes:
        """``data`` with every secret replaced by as many ``*`` (same length)."""
        for secret, stars in self._encoded:
            if secret in data:
                data = data.replace(secret, stars)
        return data

    def mask_text(self, text: str) -> str:
        """``text`` with every secret replaced by as many ``*``: a WebSocket message, relayed whole."""
        for secret in self.values:
            if secret in text:
                text = text.replace(secret, "*" * len(secret))
        return text

    def mask_headers(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        return [(name, self.mask(value)) for name, value in headers]

    def stream(self) -> StreamMask:
        return StreamMask(self)

    def longest_partial(self, data: bytes) -> int:
        """The length of the longest end of ``data`` that begins some secret (0: none).

        Those bytes may be a secret cut by a chunk boundary: they wait for the next chunk.
        """
        longest = 0
        for secret, _ in self._encoded:
            start = max(0, len(data) - len(secret) + 1)
            first = secret[:1]
            at = data.find(first, start)
            while at >= 0:
                if secret.startswith(data[at:]):
                    longest = max(longest, len(data) - at)
                    break
                at = data.find(first, at + 1)
        return longest


class StreamMask:
    """Masks secrets in a body relayed chunk by chunk, including a secret split across chunks.

    Only bytes that could begin a secret are held back, so an SSE event (which ends in a blank
    line, never the start of a key) is never delayed.
    """

    def __init__(self, secrets: Secrets) -> None:
        self._secrets = secrets
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self._secrets.mask(self._held + chunk if self._held else chunk)
        keep = self._secrets.longest_partial(data)
        if keep:
            self._held = data[-keep:]
            return data[:-keep]
        self._held = b""
        return data

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return held


# Shapes of provider keys (OpenAI's and Anthropic's sk-..., Google's AIza..., AWS access key ids):
# a client's own key is in no registry, and a third party's log line may quote it.
_KEY_SHAPES = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16})")


class RedactedRecords(logging.Filter):
    """Redacts the secrets of every registry added, and key-shaped words, from log records.

    For loggers Suture does not write itself (litellm's): their records quote providers' error
    texts, which quote the key they refused. The record's exception becomes a line of its text.
    """

    def __init__(self) -> None:
        super().__init__()
        self.registries: list[Secrets] = []

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
            record.exc_info = None
        record.exc_text = None
        for secrets in self.registries:
            text = secrets.redact_text(text)
        record.msg, record.args = _KEY_SHAPES.sub(REDACTED, text), ()
        return True
