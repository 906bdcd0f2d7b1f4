"""One loopback fake per provider and a Suture whose route table sends each model family to one
of them through litellm. litellm takes seconds to import: the session imports it once."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator

import anthropic
import openai
import pytest

from proxy.app import build_app
from tests._support.litellm_routes import CLIENT_KEY, GEMINI_KEY, GEMINI_KEY_ENV, PROVIDERS, Provider, routed_settings
from tests._support.provider_fakes import ProviderFake
from tests._support.servers import running_server

# Fake AWS credentials: litellm signs Bedrock requests with SigV4 before they reach the fake.
_AWS = {
    "AWS_ACCESS_KEY_ID": "AKIAFAKEFAKEFAKEFAKE",
    "AWS_SECRET_ACCESS_KEY": "fake-secret",
    "AWS_REGION_NAME": "us-east-1",
}


@pytest.fixture(scope="session")
def _litellm_env() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in [*_AWS, GEMINI_KEY_ENV]}
    os.environ.update(_AWS)
    os.environ[GEMINI_KEY_ENV] = GEMINI_KEY
    from proxy.upstreams import via_litellm as gateway

    gateway._import_litellm()  # once, before any server's first request waits on it
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def providers(_litellm_env: None) -> Iterator[dict[str, Provider]]:
    with contextlib.ExitStack() as stack:
        started: dict[str, Provider] = {}
        for name, (api, rules, _, model) in PROVIDERS.items():
            fake = ProviderFake(api, rules)
            started[name] = Provider(name, model, fake, stack.enter_context(running_server(fake.app())))
        yield started


@pytest.fixture(scope="module")
def suture_url(providers: dict[str, Provider]) -> Iterator[str]:
    with running_server(build_app(routed_settings(providers)), timeout_graceful_shutdown=2) as url:
        yield url


@pytest.fixture(scope="module")
def report_url(providers: dict[str, Provider]) -> Iterator[str]:
    """The same routes in report mode: broken transcripts reach the providers unrepaired.

    A module uses this or ``suture_url``, not both: each Suture closes litellm's pooled clients
    when it stops, and litellm keeps one pool per process."""
    with running_server(build_app(routed_settings(providers, mode="report")), timeout_graceful_shutdown=2) as url:
        yield url


@pytest.fixture(autouse=True)
def _fresh_fakes(request: pytest.FixtureRequest) -> None:
    if "providers" in request.fixturenames:
        for provider in request.getfixturevalue("providers").values():
            provider.fake.received.clear()


@pytest.fixture
def openai_at() -> Iterator[Callable[[str], openai.OpenAI]]:
    """OpenAI SDK clients for a Suture URL, closed after the test."""
    made: list[openai.OpenAI] = []

    def make(url: str) -> openai.OpenAI:
        made.append(openai.OpenAI(base_url=f"{url}/v1", api_key=CLIENT_KEY, max_retries=0))
        return made[-1]

    yield make
    for client in made:
        client.close()


@pytest.fixture
def anthropic_at() -> Iterator[Callable[[str], anthropic.Anthropic]]:
    made: list[anthropic.Anthropic] = []

    def make(url: str) -> anthropic.Anthropic:
        made.append(anthropic.Anthropic(base_url=url, api_key=CLIENT_KEY, max_retries=0))
        return made[-1]

    yield make
    for client in made:
        client.close()
