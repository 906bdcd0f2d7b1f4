"""HTTPS upstreams, as every real provider is: verified, with a CA of the user's choosing.

The upstream is the strict emulator served over TLS with a certificate from a throwaway CA
(trustme); the client is the official openai SDK. The seed transcript is rejected unless Suture
repaired it, so a 200 proves the repaired body crossed the TLS connection.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
import trustme

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import ConfigError, Settings, load_settings
from tests._support.proxy_e2e import LogLines, suture
from tests._support.servers import running_server
from tests._support.tunnel_proxy import TunnelProxy

GOLDEN = Path(__file__).resolve().parents[1] / "sanitizer" / "golden"
SEED = json.loads((GOLDEN / "seeds" / "000-openai-chat.json").read_text(encoding="utf-8"))
KEY = "sk-tls-test-key-0123456789"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tls") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


@pytest.fixture(scope="module")
def https_upstream(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("upstream-tls")
    cert = ca.issue_cert("127.0.0.1")
    key_file, chain_file = directory / "key.pem", directory / "chain.pem"
    cert.private_key_pem.write_to_path(str(key_file))
    cert.cert_chain_pems[0].write_to_path(str(chain_file))
    for pem in cert.cert_chain_pems[1:]:
        pem.write_to_path(str(chain_file), append=True)
    app = build_emulator_app(EmulatorConfig(provider="openai"))
    with running_server(app, ssl_certfile=str(chain_file), ssl_keyfile=str(key_file)) as url:
        assert url.startswith("https://")
        yield url


def _complete(base: str) -> str | None:
    with openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0, timeout=10) as client:
        completion = client.chat.completions.create(**SEED["before"])
    return completion.choices[0].message.content


def test_an_https_upstream_signed_by_the_configured_ca_gets_the_repaired_request(
    https_upstream: str, ca_file: Path
) -> None:
    with suture(openai={"upstream": https_upstream + "/v1"}, upstream_ca_file=ca_file) as base:
        assert _complete(base) is not None
        # The pooled TLS connection is reused for the next request.
        assert _complete(base) is not None


def test_an_untrusted_certificate_is_a_502_that_says_so(https_upstream: str, logs: LogLines) -> None:
    # certifi's bundle does not know the throwaway CA: exactly a corporate proxy's situation.
    with suture(openai={"upstream": https_upstream + "/v1"}) as base, pytest.raises(openai.APIStatusError) as info:
        _complete(base)
    assert info.value.status_code == 502
    message = str(info.value)
    assert "UntrustedCertificate: TLS certificate verification failed" in message
    assert KEY not in message
    [line] = logs.records("suture.upstream", "upstream failed")
    assert line["outcome"] == "unreachable" and line["error"] == "UntrustedCertificate"


def test_a_ca_file_that_is_missing_or_not_pem_is_a_config_error(tmp_path: Path) -> None:
    from proxy.app import build_app

    config = tmp_path / "suture.yaml"
    config.write_text(f"upstream_ca_file: {tmp_path / 'missing.pem'}\n")
    with pytest.raises(ConfigError, match="upstream_ca_file: Path does not point to a file"):
        load_settings(config)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match=r"upstream_ca_file: .*junk\.pem holds no usable PEM CA certificate"):
        build_app(Settings(upstream_ca_file=junk))


def test_an_https_upstream_behind_a_corporate_proxy_is_reached_through_its_tunnel(
    https_upstream: str, ca_file: Path, logs: LogLines
) -> None:
    tunnel = TunnelProxy(require_authorization=b"Basic " + base64.b64encode(b"agent:pr0xy-pa55word"))
    with tunnel.running() as proxy_url:
        proxy = proxy_url.replace("//", "//agent:pr0xy-pa55word@")
        with suture(
            openai={"upstream": https_upstream + "/v1"}, upstream_ca_file=ca_file, upstream_proxy=proxy
        ) as base:
            assert _complete(base) is not None
    [connect] = tunnel.heads
    assert connect.startswith(b"CONNECT 127.0.0.1:" + https_upstream.rpartition(":")[2].encode() + b" HTTP/1.1")
    assert not any("pr0xy-pa55word" in line for line in logs.lines)


def test_a_proxy_refusing_the_tunnel_is_a_502_that_says_why(https_upstream: str, ca_file: Path) -> None:
    tunnel = TunnelProxy(require_authorization=b"Basic c29tZW9uZTplbHNl")
    with tunnel.running() as proxy_url:
        settings = {"upstream_ca_file": ca_file, "upstream_proxy": proxy_url.replace("//", "//agent:wrong-pa55word@")}
        with (
            suture(openai={"upstream": https_upstream + "/v1"}, **settings) as base,
            pytest.raises(openai.APIStatusError) as info,
        ):
            _complete(base)
    assert info.value.status_code == 502
    assert "ProxyError: the proxy 127.0.0.1:" in str(info.value) and "407 Proxy Authentication Required" in str(
        info.value
    )
    assert "wrong-pa55word" not in str(info.value)
