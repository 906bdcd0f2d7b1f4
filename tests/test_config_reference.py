"""The configuration reference (docs/configuration.md): generated from the settings' field descriptions, current,
and covering every key of config/suture.yaml."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from proxy.config_reference import reference, rows

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
CONFIG = ROOT / "config" / "suture.yaml"


def test_readme_config_reference_is_current() -> None:
    section = re.search(r"<!-- config:begin -->\n(.*)<!-- config:end -->", REFERENCE, re.S)
    assert section is not None
    assert section.group(1) == reference(), (
        "docs/configuration.md is stale: regenerate it with `python -m proxy.config_reference`"
    )


def test_every_setting_is_described() -> None:
    missing = [key for key, _env, _default, description in rows() if not description]
    assert not missing, f"settings without a Field(description=...): {missing}"


def keys(data: Any, prefix: str = "") -> list[str]:
    found = []
    if isinstance(data, dict):
        for name, value in data.items():
            key = f"{prefix}{name}"
            found.append(key)
            if isinstance(value, dict):
                found += keys(value, key + ".")
    return found


def test_every_key_of_the_default_config_file_is_in_the_reference() -> None:
    documented = {key for key, *_ in rows()}
    sections = {key.split(".")[0] for key in documented}
    for key in keys(yaml.safe_load(CONFIG.read_text())):
        assert key in documented or key in sections, f"{key} in config/suture.yaml is not in the reference"


def test_every_setting_is_mentioned_in_the_default_config_file() -> None:
    # config/suture.yaml comments every option: each one appears there, set or commented out,
    # by its key or its environment variable.
    text = CONFIG.read_text()
    for key, env, _default, description in rows():
        if description.startswith("Not used"):
            continue
        name = key.split(".")[-1]
        variable = env.split(" ")[0]
        assert re.search(rf"\b{re.escape(name)}\b", text) or (variable and variable in text), (
            f"{key} is not in config/suture.yaml"
        )
