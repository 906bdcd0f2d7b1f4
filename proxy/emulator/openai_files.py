"""OpenAI's files: ``POST /v1/files`` (a multipart upload), ``GET /v1/files``,
``GET`` and ``DELETE /v1/files/{file_id}``, and ``GET /v1/files/{file_id}/content``.

Like the embeddings, these are here for Suture's pass-through, not for repair. The files live in
memory, per emulator, until it stops or they are deleted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .script import new_id

# The purposes an upload may name (the API reference's list).
PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
# Not captured from the live API; the wording is the emulator's.
NOT_MULTIPART = "Expected a multipart/form-data body with the fields 'file' and 'purpose'."
MISSING = "Missing required parameter: '{field}'."
BAD_PURPOSE = "Invalid value for 'purpose': {purpose!r}. Supported values are: " + ", ".join(map(repr, PURPOSES)) + "."
NO_SUCH_FILE = "No such File object: {file_id}"


@dataclass
class StoredFile:
    meta: dict[str, Any]
    content: bytes


@dataclass
class FileStore:
    """The uploaded files of one emulator, in upload order."""

    files: dict[str, StoredFile] = field(default_factory=dict)

    def upload(self, filename: str, content: bytes, purpose: str) -> dict[str, Any]:
        """Keep ``content`` and return its file object."""
        file_id = new_id("file-")
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }
        self.files[file_id] = StoredFile(meta, content)
        return meta

    def listing(self, *, purpose: str | None, order: str, after: str | None, limit: int) -> dict[str, Any]:
        """``GET /v1/files``: newest first unless ``order`` is ``asc``, a page of ``limit`` after ``after``."""
        metas = [f.meta for f in self.files.values() if purpose is None or f.meta["purpose"] == purpose]
        if order != "asc":
            metas.reverse()
        ids = [m["id"] for m in metas]
        start = ids.index(after) + 1 if after in ids else 0
        page = metas[start : start + limit]
        return {
            "object": "list",
            "data": page,
            "has_more": start + limit < len(metas),
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
        }

    def get(self, file_id: str) -> StoredFile | None:
        return self.files.get(file_id)

    def delete(self, file_id: str) -> dict[str, Any] | None:
        """The deletion receipt, or None for a file that is not there."""
        if self.files.pop(file_id, None) is None:
            return None
        return {"id": file_id, "object": "file", "deleted": True}
