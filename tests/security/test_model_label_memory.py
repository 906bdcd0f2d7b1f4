"""The metrics' model labels remember the names they judged, so a client's name costs one dict
lookup the next time; a name judged ``other`` is remembered only when it is short. A model name
is whatever the client wrote, as long as its body: remembered, a few long ones would hold that
much memory for as long as the server runs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from proxy.app import build_app
from proxy.labels import MAX_NAME_LENGTH, OTHER, ModelLabels
from proxy.observers.metrics import ExchangeMetrics
from proxy.settings import Settings
from tests._support.faulty_upstream import FaultyUpstream
from tests._support.proxy_e2e import LogLines, wait_for
from tests._support.servers import running_server

MiB = 1024 * 1024


@pytest.fixture
def faulty() -> Iterator[FaultyUpstream]:
    upstream = FaultyUpstream()
    with upstream.running():
        yield upstream


def _remembered(labels: ModelLabels) -> list[str]:
    return [name for name in labels._labels if name is not None]


def test_long_names_judged_other_are_never_remembered() -> None:
    labels = ModelLabels(max_first_seen=1)
    long_names = [f"{i}-" + "x" * (64 * 1024) for i in range(30)]
    assert [labels(name) for name in long_names * 2] == [OTHER] * 60
    assert labels("gpt 4o; DROP") == OTHER  # not a model name's characters, but short
    assert labels("first-seen") == "first-seen"
    assert labels("x" * (MAX_NAME_LENGTH + 1)) == OTHER
    remembered = _remembered(labels)
    assert [name[:8] for name in remembered if len(name) > 4 * MAX_NAME_LENGTH] == []
    assert sorted(remembered) == sorted(["gpt 4o; DROP", "first-seen", "x" * (MAX_NAME_LENGTH + 1)])


def test_short_names_judged_other_are_remembered_up_to_a_bound() -> None:
    labels = ModelLabels(max_first_seen=0)
    for i in range(1000):
        assert labels(f"model {i}") == OTHER
    assert len(_remembered(labels)) < 1000


def test_multi_mib_model_names_are_labelled_other_and_not_kept(faulty: FaultyUpstream, logs: LogLines) -> None:
    sections: dict[str, Any] = {"openai": {"upstream": faulty.url + "/v1"}}
    app = build_app(Settings(**sections))
    names = [f"model-{i}-" + "m" * (3 * MiB) for i in range(3)]
    with running_server(app, timeout_graceful_shutdown=2) as url, httpx.Client(base_url=url, timeout=30) as client:
        for name in names:
            body = {"model": name, "messages": [{"role": "user", "content": "hi"}]}
            assert client.post("/v1/chat/completions", json=body).status_code == 200
        wait_for(lambda: len(logs.records("suture.access", "request", path="/v1/chat/completions")) >= 3)
        metrics = client.get("/metrics").text
        labels = next(o for o in app.state.suture.observers if isinstance(o, ExchangeMetrics)).model_labels
        remembered = _remembered(labels)
    assert len(faulty.seen) == 3  # the names did reach the upstream whole
    assert all(len(s.body) > 3 * MiB for s in faulty.seen)
    counted = re.findall(
        r'suture_requests_total\{[^}]*model="([^"]*)"[^}]*route="/v1/chat/completions"[^}]*\} (\S+)', metrics
    )
    assert counted == [(OTHER, "3.0")]
    assert [name[:8] for name in remembered if len(name) > 4 * MAX_NAME_LENGTH] == []
