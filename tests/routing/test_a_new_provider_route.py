"""A native route for a provider Suture does not know is one row of the route table.

A fictional OpenAI-compatible provider, "acme", whose bodies follow Mistral's rules, is added in
one place (two values appended to ``proxy.provider_table`` before anything reads it) and is then:
served (its own path, settings section and client key; a broken transcript repaired by the rules
the core's provider table binds for it, and accepted by a strict emulator of Mistral's API),
replayed (``suture replay`` finds its endpoint and reads its key variable) and documented (the
the docs' route and configuration references list it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from proxy import provider_table
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.routes.reference import reference
from tests._support.servers import free_port, running_server, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
CLIENT_KEY = "acme-client-key-5b1e0c"
UPSTREAM_KEY = "acme-upstream-key-77d2aa"

# The one place: what a contributor adds to proxy/provider_table.py for a new provider route.
THE_ROW = """
from proxy import provider_table

ACME = provider_table.Provider(
    "acme",
    "https://api.acme.example/v1",
    errors="openai-chat",
    upstream_key="bearer",
    key_env="ACME_API_KEY",
    rules="mistral",
)
provider_table.ROUTES = (*provider_table.ROUTES, provider_table.Route("acme-chat", ("/acme/v1/chat/completions",), ACME, "openai-chat", "/chat/completions"))
"""
LAUNCHER = (
    THE_ROW
    + """
import sys
if sys.argv[1] == "references":
    from proxy.config_reference import reference as config_reference
    from proxy.routes.reference import reference as route_reference
    print(route_reference())
    print(config_reference())
else:
    from proxy.cli import main
    sys.exit(main(sys.argv[1:]))
"""
)

# Valid for OpenAI, refused by Mistral: its tool call ids must be 9 letters or digits. And
# interrupted: the second call was never answered.
BROKEN = {
    "model": "acme-large",
    "messages": [
        {"role": "user", "content": "Find the weather in Paris and in Oslo."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_paris_0001", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
                {"id": "call_oslo_0002", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_paris_0001", "content": "18 C"},
        {"role": "user", "content": "Never mind Oslo."},
    ],
    "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}],
}


def launcher_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "ACME_", "OPENAI_"))}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    tmp = tmp_path_factory.mktemp("acme")
    launcher = tmp / "suture_with_acme.py"
    launcher.write_text(LAUNCHER)
    record = tmp / "emulator.jsonl"
    with running_server(build_emulator_app(EmulatorConfig(record_path=record))) as emulator:
        port = free_port()
        env = launcher_env(
            SUTURE_ACME_UPSTREAM=emulator + "/mistral/v1",
            SUTURE_ACME_UPSTREAM_API_KEY=UPSTREAM_KEY,
            SUTURE_ACME_CLIENT_API_KEY=CLIENT_KEY,
            SUTURE_LOG_LEVEL="warning",
        )
        log = tmp / "suture.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, str(launcher), "serve", "--port", str(port)], env=env, stdout=out, stderr=out
            )
            try:
                url = f"http://127.0.0.1:{port}"
                wait_until_ready(url, process, timeout=30)
                yield url, emulator, launcher
            finally:
                process.terminate()
                process.wait(10)


def received(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines() if '"path"' in line]


def test_the_route_is_served_and_its_bodies_get_the_rules_the_core_binds_for_it(
    stack: tuple[str, str, Path], tmp_path: Path
) -> None:
    suture, emulator, _ = stack
    direct = openai.OpenAI(base_url=emulator + "/mistral/v1", api_key="any", max_retries=0)
    with pytest.raises(openai.BadRequestError):
        direct.chat.completions.create(**BROKEN)

    client = openai.OpenAI(base_url=suture + "/acme/v1", api_key=CLIENT_KEY, max_retries=0)
    raw = client.chat.completions.with_raw_response.create(**BROKEN)
    assert raw.http_response.status_code == 200
    assert int(raw.headers["x-suture-repairs"]) >= 2  # the unanswered call, and Mistral's ids
    assert raw.parse().choices[0].message is not None


def test_the_route_s_section_holds_its_client_key_and_its_errors_take_its_shape(stack: tuple[str, str, Path]) -> None:
    suture, _, _ = stack
    client = openai.OpenAI(base_url=suture + "/acme/v1", api_key="not-the-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(**BROKEN)
    assert caught.value.status_code == 401
    assert caught.value.body["message"] == "invalid API key for this Suture proxy"  # type: ignore[index]
    # The OpenAI route keeps its own section: no client key there, so the same key is not checked.
    assert "acme" not in str(caught.value.body)


def test_suture_replay_finds_the_route_s_endpoint_and_reads_its_key_variable(
    stack: tuple[str, str, Path], tmp_path: Path
) -> None:
    suture, _, launcher = stack
    payload = tmp_path / "broken.json"
    payload.write_text(json.dumps(BROKEN))

    def replay(**env: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(launcher), "replay", str(payload), "--to", suture + "/acme/v1", "--json"]
        return subprocess.run(command, env=launcher_env(**env), capture_output=True, text=True, timeout=60)

    done = replay(ACME_API_KEY=CLIENT_KEY, OPENAI_API_KEY="the-openai-key-is-not-acme-s")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["url"] == suture + "/acme/v1/chat/completions"
    # Both reach the route, with the key; Suture repairs the original in transit too.
    assert outcome["original"]["status"] == outcome["repaired"]["status"] == 200
    assert CLIENT_KEY not in done.stdout

    # Without the route's key variable the key is not taken from another provider's.
    done = replay(OPENAI_API_KEY=CLIENT_KEY)
    assert json.loads(done.stdout)["repaired"]["status"] == 401


def test_the_route_and_its_settings_are_documented(stack: tuple[str, str, Path]) -> None:
    _, _, launcher = stack
    done = subprocess.run(
        [sys.executable, str(launcher), "references"], env=launcher_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert (
        "| `/acme/v1/chat/completions` | `openai-chat` | `acme:` | `https://api.acme.example/v1/chat/completions` |"
        in done.stdout
    )
    assert "`ACME_API_KEY`" in done.stdout
    for key, variable in (
        ("acme.upstream", "SUTURE_ACME_UPSTREAM"),
        ("acme.client_api_key", "SUTURE_ACME_CLIENT_API_KEY"),
    ):
        assert re.search(rf"\| `{re.escape(key)}` \| `{variable}` \|", done.stdout), key


def test_the_route_reference_is_current() -> None:
    readme = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    section = re.search(r"<!-- routes:begin -->\n(.*)<!-- routes:end -->", readme, re.S)
    assert section is not None
    assert section.group(1) == reference(), "regenerate it with `python -m proxy.routes.reference`"


def test_a_row_that_contradicts_the_core_s_provider_table_is_refused() -> None:
    nowhere = provider_table.Provider("nowhere", "https://nowhere.example", errors="openai-chat", upstream_key="bearer")
    row = provider_table.Route(
        "nowhere", ("/nowhere/v1/chat/completions",), nowhere, "openai-chat", "/chat/completions"
    )
    with pytest.raises(ValueError, match="no 'nowhere' for openai-chat"):
        provider_table.check((*provider_table.ROUTES, row))
    clash = provider_table.Route(
        "again", ("/v1/chat/completions",), provider_table.OPENAI, "openai-chat", "/chat/completions"
    )
    with pytest.raises(ValueError, match="two routes serve /v1/chat/completions"):
        provider_table.check((*provider_table.ROUTES, clash))
    renamed = provider_table.Route(
        "chat", ("/again/v1/chat/completions",), provider_table.OPENAI, "openai-chat", "/chat/completions"
    )
    with pytest.raises(ValueError, match="two routes are named 'chat'"):
        provider_table.check((*provider_table.ROUTES, renamed))
    # Its own errors in a shape the core cannot build for it would be a 500 on every refusal.
    odd = provider_table.Provider(
        "odd", "https://odd.example/v1", errors="gemini", upstream_key="bearer", rules="mistral"
    )
    row = provider_table.Route("odd", ("/odd/v1/chat/completions",), odd, "openai-chat", "/chat/completions")
    with pytest.raises(
        ValueError, match="errors take the shape of gemini, for which the core's provider table has no 'mistral'"
    ):
        provider_table.check((*provider_table.ROUTES, row))
