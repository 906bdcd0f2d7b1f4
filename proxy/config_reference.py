"""The configuration reference (docs/configuration.md), generated from the settings' own field descriptions.

``python -m proxy.config_reference`` prints the Markdown table; a test keeps the docs' copy
(between ``<!-- config:begin -->`` and ``<!-- config:end -->``) equal to it.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from sanitizer import Policy

from .settings import Settings


def rows() -> Iterator[tuple[str, str, str, str]]:
    """(key, environment variable, default, description) for every setting, sections expanded."""
    yield from _rows(Settings, (), Settings())


def _rows(model: type[BaseModel], path: tuple[str, ...], instance: Any) -> Iterator[tuple[str, str, str, str]]:
    for name, field in model.model_fields.items():
        key = (*path, name)
        value = getattr(instance, name, None) if instance is not None else _default(field)
        nested = _model_in(field.annotation)
        if nested is not None and not _is_container(field.annotation):
            yield from _rows(nested, key, value)
        elif nested is not None:
            # A list or mapping of sections: one row per field of an element.
            element = "[]" if _origin(field.annotation) in (tuple, list) else ".NAME"
            env = f"SUTURE_{name.upper()} (JSON)" if not path else ""
            yield ".".join(key), env, _show(value), field.description or ""
            for sub_name, sub_field in nested.model_fields.items():
                sub_default = _default(sub_field)
                yield f"{'.'.join(key)}{element}.{sub_name}", "", _show(sub_default), sub_field.description or ""
        else:
            if value is None and path == ("policy",):
                value = getattr(Policy(), name)  # unset policy fields keep the sanitizer's defaults
            yield ".".join(key), _env(key), _show(value, field), field.description or ""


def _env(key: tuple[str, ...]) -> str:
    # env_nested_max_split=1: the first "_" after the prefix splits section from field.
    if len(key) <= 2:
        return "SUTURE_" + "_".join(part.upper() for part in key)
    return "SUTURE_" + "_".join(part.upper() for part in key[:2]) + " (JSON)"


def _default(field: FieldInfo) -> Any:
    if field.default is not PydanticUndefined:
        return field.default
    if field.default_factory is not None:
        return field.default_factory()  # type: ignore[call-arg]
    return None


def _show(value: Any, field: FieldInfo | None = None) -> str:
    if field is not None and _secret(field.annotation):
        return "(environment only)"
    if value is None:
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, tuple | list):
        return _code("[" + ", ".join(str(v) for v in value) + "]")
    if isinstance(value, dict):
        return _code(str(value))
    return _code(str(value))


def _code(text: str) -> str:
    # A code span holding a backtick needs a longer fence and spaces inside it.
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _origin(annotation: Any) -> Any:
    return typing.get_origin(annotation)


def _members(annotation: Any) -> tuple[Any, ...]:
    if _origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _secret(annotation: Any) -> bool:
    return any(member is SecretStr for member in _members(annotation))


def _is_container(annotation: Any) -> bool:
    return _origin(annotation) in (tuple, list, dict)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    candidates = [annotation, *typing.get_args(annotation)]
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def reference() -> str:
    """The Markdown table, one row per setting."""
    lines = ["| Key | Environment | Default | Description |", "| --- | --- | --- | --- |"]
    for key, env, default, description in rows():
        cells = [f"`{key}`", f"`{env}`" if env else "", default, description]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference())
