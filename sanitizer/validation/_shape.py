"""Shape guards: a body of the wrong shape raises SanitizeError with the field's path."""

from __future__ import annotations

from typing import Any

from .._errors import SanitizeError
from ..dialects._shape import type_name


def as_dict(value: object, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SanitizeError(path, f"must be an object, not {_kind(value)}")
    return value


def as_list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise SanitizeError(path, f"must be an array, not {_kind(value)}")
    return value


def as_str(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise SanitizeError(path, f"must be a string, not {_kind(value)}")
    return value


def body_dict(body: object) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise SanitizeError("", f"the request body must be a JSON object, not {_kind(body)}")
    return body


def required_list(body: dict[str, Any], key: str) -> list[Any]:
    if key not in body:
        raise SanitizeError(key, "is required")
    return as_list(body[key], key)


_kind = type_name
