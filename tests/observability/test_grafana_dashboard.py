"""deploy/grafana/suture.json cannot drift from the code: every PromQL expression in it is parsed,
and each metric it names and each label it uses must be on a live Suture's /metrics, after
traffic that makes every series exist (repairs, a strict rejection, a client that leaves)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests._support.observed import BROKEN_ANTHROPIC, BROKEN_OPENAI, observed, rejecting_app
from tests._support.proxy_e2e import captured_logs, wait_for
from tests._support.servers import running_server

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana" / "suture.json"

# Labels Prometheus attaches to every series it scrapes: never on /metrics itself.
TARGET_LABELS = {"job", "instance"}
# PromQL's functions, aggregations and keywords: every other name in an expression is a metric.
PROMQL_WORDS = {
    "sum", "count", "min", "max", "avg", "rate", "irate", "increase", "histogram_quantile", "by", "without",
    "topk", "bottomk", "label_values", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
    "delta", "clamp_min", "abs", "offset", "bool",
}  # fmt: skip

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)?\s*\{([^}]*)\}")
_MATCHER = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*\"(?:[^\"\\]|\\.)*\"\s*,?")
_GROUPING = re.compile(r"\b(by|without)\s*\(([^)]*)\)")
_NAME = re.compile(r"(?<![\w$.\[])([A-Za-z_:][A-Za-z0-9_:]*)\b(?!\s*\()")


def expressions(node: Any) -> Iterator[str]:
    """Every PromQL expression in the dashboard: panel targets and template variable queries."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                yield value
            else:
                yield from expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from expressions(item)


def parse(expr: str) -> tuple[dict[str, set[str]], set[str]]:
    """The metrics an expression reads, each with the labels its selector matches on, and the
    labels it groups by. Raises AssertionError on what it cannot read (so the parse is total)."""
    values = re.fullmatch(r"label_values\(\s*([A-Za-z_:][\w:]*)\s*,\s*(\w+)\s*\)", expr)
    if values:
        return {values.group(1): {values.group(2)}}, set()
    metrics: dict[str, set[str]] = {}
    for name, body in _SELECTOR.findall(expr):
        assert name, f"a selector without a metric name: {expr}"
        labels = set()
        rest = body
        while rest.strip():
            matched = _MATCHER.match(rest)
            assert matched, f"cannot read the matchers {body!r} of {expr}"
            labels.add(matched.group(1))
            rest = rest[matched.end() :]
        metrics.setdefault(name, set()).update(labels)
    grouping: set[str] = set()
    for _, names in _GROUPING.findall(expr):
        grouping.update(n.strip() for n in names.split(",") if n.strip())
    # What is left once strings, selectors' bodies, groupings, ranges and numbers are out: metric names.
    bare = _GROUPING.sub(" ", _STRING.sub('""', expr))
    bare = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\b\d+(\.\d+)?\b", " ", bare)
    for name in _NAME.findall(bare):
        if name not in PROMQL_WORDS:
            metrics.setdefault(name, set())
    assert metrics, f"no metric in {expr}"
    return metrics, grouping


def test_the_parser_reads_what_the_dashboard_writes() -> None:
    assert parse('histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{upstream=~"$u", x!="1"}[5m])))') == (
        {"a_bucket": {"upstream", "x"}},
        {"le", "route"},
    )
    assert parse("sum by (state) (b) / count(c_total)") == ({"b": set(), "c_total": set()}, {"state"})
    assert parse("label_values(d_total, upstream)") == ({"d_total": {"upstream"}}, set())


@pytest.fixture(scope="module")
def live_metrics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Each sample name on a live Suture's /metrics, with the labels its samples carry."""
    tmp_path = tmp_path_factory.mktemp("dashboard")
    with (
        running_server(rejecting_app()) as rejecter,
        observed(
            tmp_path,
            stream_delay=0.3,
            anthropic={"mode": "strict"},
            upstreams={"rejecter": {"protocol": "openai", "base_url": rejecter + "/v1"}},
            routes=[{"match": "gpt-rejected", "upstream": "rejecter"}],
        ) as s,
        captured_logs() as logs,
    ):
        with s.openai() as client:
            client.chat.completions.create(**BROKEN_OPENAI)
            with pytest.raises(openai.BadRequestError):  # repaired, and rejected all the same
                client.chat.completions.create(**{**BROKEN_OPENAI, "model": "gpt-rejected"})
            twice = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Hello?"}]
            with pytest.raises(openai.BadRequestError):  # repaired after the refusal, refused again
                client.chat.completions.create(model="gpt-rejected", messages=twice)  # type: ignore[arg-type]
            with client.chat.completions.create(**BROKEN_OPENAI, stream=True) as stream:
                next(iter(stream))  # and leave: a client disconnect
        with s.anthropic() as ac, pytest.raises(anthropic.BadRequestError):
            ac.messages.create(**BROKEN_ANTHROPIC)  # strict mode: a rejection
        wait_for(lambda: len(logs.records("suture.access", "request")) >= 4, timeout=5)
        wait_for(lambda: logs.records("suture.upstream", "client disconnected; upstream request cancelled"), timeout=5)
        text = httpx.get(s.url + "/metrics").text
    found: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    return found


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert dashboard["title"] == "Suture" and dashboard["uid"]
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    assert all(p["targets"] and p["datasource"]["uid"] == "${datasource}" for p in panels)
    titles = " ".join(p["title"].lower() for p in panels)
    for topic in (
        "route and upstream",
        "latency",
        "by rule",
        "rejections by upstream",
        "still rejected",
        "after a refusal",
        "disconnects",
        "pool",
    ):
        assert topic in titles, topic


@pytest.mark.parametrize("expr", sorted(set(expressions(json.loads(DASHBOARD.read_text(encoding="utf-8"))))))
def test_every_metric_and_label_of_the_dashboard_is_served(expr: str, live_metrics: dict[str, set[str]]) -> None:
    metrics, grouping = parse(expr)
    for name, labels in metrics.items():
        assert name in live_metrics, f"{name} is not on /metrics ({expr})"
        missing = labels - live_metrics[name] - TARGET_LABELS
        assert not missing, f"{name} has no label {missing} ({expr})"
    served = set().union(*(live_metrics[name] for name in metrics)) | TARGET_LABELS
    assert grouping <= served, f"grouped by {grouping - served}, which {sorted(metrics)} do not have ({expr})"
