"""A provider that cannot be reached through litellm gets the same answer as on the native routes,
whichever provider it is and whatever the client's format: 502 when no connection can be made,
504 when the provider does not answer in time; streams included, before their first byte.

litellm wraps the same DNS failure in a different exception class per provider (and Gemini's
streams only connect when first read): these tests hold Suture's answer to one shape for all."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from proxy.app import build_app
from proxy.settings import Settings
from tests._support.litellm_routes import NO_LITELLM, PROVIDERS
from tests._support.servers import free_port, running_asyncio_server, running_server

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]

CLIENT_APIS = ["openai-chat", "anthropic-messages", "openai-responses"]
READ_TIMEOUT = 1.0


@contextlib.contextmanager
def _silent_upstream() -> Iterator[str]:
    """Accepts connections and reads requests, and never answers."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            while await reader.read(65536):
                pass
        writer.close()

    with running_asyncio_server(hold) as url:
        yield url


@pytest.fixture(scope="module")
def suture_url(_litellm_env: None) -> Iterator[str]:
    """Model ``down-NAME`` goes to a port nothing listens on, ``silent-NAME`` to one that never
    answers, ``nowhere-gemini`` to a host no DNS knows: each through litellm as provider NAME."""
    closed = f"http://127.0.0.1:{free_port()}"
    with _silent_upstream() as silent:
        upstreams: dict[str, Any] = {}
        routes = []
        for name, (_, rules, template, _) in PROVIDERS.items():
            for kind, base in (("down", closed), ("silent", silent), ("nowhere", "http://suture-test.invalid")):
                upstreams[f"{kind}-{name}"] = {
                    "protocol": "litellm",
                    "model": template,
                    "api_base": base,
                    "provider": rules,
                    "api_key_env": "SUTURE_TEST_ROUTING_GEMINI_KEY",
                }
                routes.append({"match": f"{kind}-{name}", "upstream": f"{kind}-{name}"})
        settings = Settings(upstreams=upstreams, routes=routes, timeouts={"read": READ_TIMEOUT, "connect": 2.0})
        with running_server(build_app(settings), timeout_graceful_shutdown=2) as url:
            yield url


def _refusal(url: str, api: str, model: str, stream: bool) -> tuple[int, dict[str, Any]]:
    """The status and error body a client of ``api`` gets, through the official SDK."""
    error: openai.APIStatusError | anthropic.APIStatusError
    if api == "anthropic-messages":
        with anthropic.Anthropic(base_url=url, api_key="sk-client", max_retries=0) as claude:
            with pytest.raises(anthropic.APIStatusError) as caught_a:
                claude.messages.create(
                    model=model, max_tokens=64, messages=[{"role": "user", "content": "hi"}], stream=stream
                )
            error = caught_a.value
    else:
        with openai.OpenAI(base_url=f"{url}/v1", api_key="sk-client", max_retries=0) as client:
            with pytest.raises(openai.APIStatusError) as caught_o:
                if api == "openai-chat":
                    client.chat.completions.create(
                        model=model, messages=[{"role": "user", "content": "hi"}], stream=stream
                    )
                else:
                    client.responses.create(model=model, input="hi", stream=stream)
            error = caught_o.value
    body = error.response.json()
    return error.status_code, body


def _message(api: str, body: dict[str, Any]) -> str:
    if api == "anthropic-messages":
        assert body["type"] == "error"
    message = body["error"]["message"]
    assert isinstance(message, str)
    return message


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", CLIENT_APIS)
def test_a_provider_refusing_connections_is_a_502_for_every_provider(suture_url: str, api: str, stream: bool) -> None:
    messages = set()
    for name in PROVIDERS:
        status, body = _refusal(suture_url, api, f"down-{name}", stream)
        assert status == 502, (name, body)
        messages.add(_message(api, body))
    # One answer for one failure, whichever provider litellm was asked to reach.
    assert len(messages) == 1, messages
    (message,) = messages
    assert message.startswith("Suture could not reach the provider: ") and "Connect call failed" in message


@pytest.mark.parametrize("api", CLIENT_APIS)
def test_an_unknown_host_is_a_502_before_a_gemini_stream_begins(suture_url: str, api: str) -> None:
    # Gemini's streams connect on their first read: without care, the client got a 200 and then an error event.
    status, body = _refusal(suture_url, api, "nowhere-gemini", stream=True)
    assert status == 502
    assert _message(api, body).startswith("Suture could not reach the provider: ")


@pytest.mark.parametrize(
    ("api", "name", "stream"),
    [
        ("openai-chat", "gemini", True),
        ("openai-chat", "mistral", False),
        ("anthropic-messages", "gemini", True),
        ("openai-responses", "anthropic", True),
    ],
)
def test_a_provider_that_does_not_answer_is_a_504_after_the_read_timeout(
    suture_url: str, api: str, name: str, stream: bool
) -> None:
    status, body = _refusal(suture_url, api, f"silent-{name}", stream)
    assert status == 504
    assert _message(api, body).startswith("the provider did not answer in time")
