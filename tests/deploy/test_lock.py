"""The image's dependencies are the locked ones: requirements.lock pins every dependency of
pyproject.toml, each with its hashes, and the Dockerfile installs exactly that (two builds of one
commit get the same packages). Regenerate the lock with the command written at its top."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCK = (REPO / "requirements.lock").read_text(encoding="utf-8")
PINNED = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)[^\n]*\\\n((?:\s+--hash=sha256:[0-9a-f]{64}[ \\]*\n)+)", re.M)


def pins() -> dict[str, tuple[str, int]]:
    """Each locked package: its version and how many hashes it has."""
    return {canonicalize_name(m[1]): (m[2], m[3].count("--hash=")) for m in PINNED.finditer(LOCK)}


def test_every_dependency_is_pinned_within_its_range_with_hashes() -> None:
    locked = pins()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for spec in project["dependencies"]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement.name} is not in requirements.lock: regenerate it"
        version, hashes = locked[name]
        assert requirement.specifier.contains(version, prereleases=True), f"{name}=={version} is outside {spec!r}"
        assert hashes >= 1


def test_every_locked_package_has_its_hashes() -> None:
    entries = re.findall(r"^[A-Za-z0-9_.-]+==", LOCK, re.M)
    assert len(entries) == len(pins()) > 10


def test_the_image_installs_the_lock_with_hashes_and_the_wheel_alone() -> None:
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "pip install --require-hashes" in dockerfile and "-r /tmp/requirements.lock" in dockerfile
    assert "pip install --no-deps /wheels/*.whl" in dockerfile
    assert "COPY requirements.lock" in dockerfile
