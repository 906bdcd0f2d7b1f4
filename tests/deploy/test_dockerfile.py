"""The Dockerfile against the project: it cannot be built here (no registry for base images),
so every command and path in it is checked against what it refers to."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from proxy.app import build_app
from proxy.cli import build_parser
from proxy.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def exec_form(arguments: str) -> list[str]:
    argv = json.loads(arguments)
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv), "exec (JSON) form expected"
    return argv


def only(keyword: str) -> str:
    found = [rest for kw, rest in instructions() if kw == keyword]
    assert found, f"no {keyword}"
    return found[-1]  # the last one is the one that counts


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    return steps[last_from:]


def test_every_copied_source_exists_and_dockerignore_lets_it_in() -> None:
    ignore = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()]
    ignored_all = "*" in ignore
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copies = [rest for kw, rest in instructions() if kw == "COPY" and not rest.startswith("--from")]
    assert copies
    for rest in copies:
        *sources, _destination = shlex.split(rest)
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: no such path"
            if ignored_all:
                assert source.split("/")[0] in allowed, f"COPY {source}: excluded by .dockerignore"


def test_the_image_runs_as_a_non_root_user_it_creates() -> None:
    user = only("USER")
    assert user not in ("root", "0") and not user.startswith("0:")
    run = " ".join(rest for kw, rest in final_stage() if kw == "RUN")
    assert re.search(rf"useradd\b.*--uid {re.escape(user)}\b", run) or f"useradd {user}" in run


def test_cmd_is_suture_serve_with_real_flags_on_all_interfaces() -> None:
    argv = exec_form(only("CMD"))
    assert argv[0] == "suture"
    args = build_parser().parse_args(argv[1:])  # exits (fails the test) on an unknown command or flag
    assert argv[1] == "serve"
    assert args.host == "0.0.0.0"
    # The config file it names is the one the image puts there.
    copied = {shlex.split(rest)[-1]: shlex.split(rest)[0] for kw, rest in final_stage() if kw == "COPY"}
    assert args.config is not None and copied.get(str(args.config)) == "config/suture.yaml"


def test_exposed_port_is_the_served_port_and_the_default() -> None:
    exposed = int(only("EXPOSE").split("/")[0])
    args = build_parser().parse_args(exec_form(only("CMD"))[1:])
    assert exposed == Settings().port == (args.port or Settings().port)


def test_healthcheck_asks_a_real_route_on_the_served_port() -> None:
    healthcheck = only("HEALTHCHECK")
    urls = re.findall(r"https?://[^'\"\s]+", healthcheck)
    assert len(urls) == 1
    url = urlsplit(urls[0])
    assert url.port == int(only("EXPOSE").split("/")[0])
    paths = {getattr(route, "path", None) for route in build_app(Settings()).routes}
    assert url.path == "/healthz" and url.path in paths
    # It runs with what the image has: no curl or wget in python:*-slim.
    probe = exec_form(healthcheck.split("CMD", 1)[1].strip())
    assert probe[0] == "python"
    compile(probe[2], "<healthcheck>", "exec")


@pytest.mark.parametrize("stage", ["build", "final"])
def test_both_stages_use_a_slim_python_base(stage: str) -> None:
    bases = [rest.split()[0] for kw, rest in instructions() if kw == "FROM"]
    base = bases[0] if stage == "build" else bases[-1]
    assert re.fullmatch(r"python:3\.1[1-9]-slim", base)
