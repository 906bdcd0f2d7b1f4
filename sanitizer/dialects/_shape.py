"""Shape checks shared by the dialects: each failure names the path of the bad field."""

from __future__ import annotations

from typing import Any

from .._errors import SanitizeError
from .._ir import CALL, RESULT


def messages_of(body: dict[str, Any], key: str = "messages") -> list[Any]:
    messages = body.get(key)
    if messages is None:
        raise SanitizeError(key, "is required")
    if not isinstance(messages, list):
        raise SanitizeError(key, f"must be a list, not {type_name(messages)}")
    return messages


def require_object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SanitizeError(path, f"must be an object, not {type_name(value)}")
    return value


def require_id(value: Any, path: str) -> str:
    if not isinstance(value, str):
        what = "is missing" if value is None else f"must be a string, not {type_name(value)}"
        raise SanitizeError(path, what)
    return value


def type_name(value: Any) -> str:
    """The JSON type of a parsed value, as a phrase for error messages ("an array", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def require_sides(parts: list[Any], role: str, path: str, *, caller: str, answerer: str) -> None:
    """Tool calls come from the model's turns and results from the user's: anything else is malformed."""
    for index, part in enumerate(parts):
        if part.kind == CALL and role != caller:
            raise SanitizeError(f"{path}[{index}]", f"tool calls belong in {caller} messages, not in {role} messages")
        if part.kind == RESULT and role != answerer:
            problem = f"tool results belong in {answerer} messages, not in {role} messages"
            raise SanitizeError(f"{path}[{index}]", problem)
