"""A client that leaves a stream through a litellm route stops the provider's stream too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from proxy.app import build_app
from proxy.settings import Settings
from tests._support.litellm_routes import NO_LITELLM
from tests._support.provider_fakes import ProviderFake
from tests._support.proxy_e2e import wait_for
from tests._support.servers import running_server

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]

LONG = "Tell me a long story. " * 5


@pytest.fixture(scope="module")
def slow_route(_litellm_env: None) -> Iterator[tuple[str, ProviderFake]]:
    fake = ProviderFake("openai-chat", "deepseek", stream_delay=0.3)
    with running_server(fake.app()) as provider:
        settings = Settings(
            upstreams={"slow": {"protocol": "litellm", "model": "openai/{model}", "api_base": provider}},
            routes=[{"match": "slow-*", "upstream": "slow"}],
        )
        with running_server(build_app(settings), timeout_graceful_shutdown=2) as url:
            yield url, fake


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/v1/responses"])
def test_leaving_a_stream_cancels_the_providers(slow_route: tuple[str, ProviderFake], path: str) -> None:
    url, fake = slow_route
    before = fake.disconnects
    body: dict[str, Any] = {"model": "slow-chat", "max_tokens": 64, "stream": True}
    if path == "/v1/responses":
        body["input"] = LONG
    else:
        body["messages"] = [{"role": "user", "content": LONG}]
    with (
        httpx.Client(timeout=10) as client,
        client.stream("POST", url + path, json=body, headers={"x-api-key": "k", "authorization": "Bearer k"}) as answer,
    ):
        assert answer.status_code == 200
        assert answer.headers["cache-control"] == "no-cache" and answer.headers["x-accel-buffering"] == "no"
        first = next(answer.iter_lines())
        assert first.startswith(("data: ", "event: "))
    # The whole reply takes seconds to stream; the fake sees its client (litellm) leave well before.
    assert wait_for(lambda: fake.disconnects > before, timeout=3)
