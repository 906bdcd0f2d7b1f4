"""Settings: the shipped YAML, env over file, errors that name the key, secrets kept secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.settings import ConfigError, Settings, default_config_path, load_settings
from sanitizer import Policy

REPO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "suture.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suture.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_config_loads_and_states_the_defaults() -> None:
    assert default_config_path() == REPO_CONFIG
    settings = load_settings(REPO_CONFIG)
    defaults = Settings()
    assert settings.model_dump(exclude={"policy"}) == defaults.model_dump(exclude={"policy"})
    assert settings.policy.to_policy() == defaults.policy.to_policy()
    assert (settings.host, settings.port, settings.mode) == ("127.0.0.1", 8787, "repair")
    assert settings.openai.upstream == "https://api.openai.com/v1"
    assert settings.anthropic.upstream == "https://api.anthropic.com"
    assert settings.policy.to_policy() == Policy(orphan_tool_call="pair", trailing_tool_call="pair")


def test_no_config_uses_the_default_file() -> None:
    assert load_settings() == load_settings(REPO_CONFIG)


def test_env_beats_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "port: 9000\nopenai:\n  mode: strict\ntimeouts:\n  read: 5\n")
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREAM", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("SUTURE_ANTHROPIC_UPSTREAM", "http://127.0.0.1:10")
    monkeypatch.setenv("SUTURE_PORT", "9100")
    monkeypatch.setenv("SUTURE_MAX_BODY_BYTES", "1234")
    monkeypatch.setenv("SUTURE_TIMEOUTS_CONNECT", "2.5")
    monkeypatch.setenv("SUTURE_POLICY_ORPHAN_TOOL_CALL", "drop")
    settings = load_settings(path)
    assert settings.port == 9100
    assert settings.max_body_bytes == 1234
    assert settings.openai.upstream == "http://127.0.0.1:9/v1"  # trailing slash trimmed
    assert settings.openai.mode == "strict"  # the file's value survives beside env's sibling key
    assert settings.anthropic.upstream == "http://127.0.0.1:10"
    assert (settings.timeouts.connect, settings.timeouts.read) == (2.5, 5)
    assert settings.policy.to_policy().orphan_tool_call == "drop"
    assert settings.mode_for("openai") == "strict"
    assert settings.mode_for("anthropic") == "repair"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("prot: 1\n", "prot: unknown setting"),
        ("openai:\n  upstreem: http://x\n", "openai.upstreem: unknown setting"),
        ("policy:\n  orphan: drop\n", "policy.orphan: unknown setting"),
        ("mode: fix\n", "mode: Input should be 'repair', 'report' or 'strict'"),
        ("openai:\n  upstream: ftp://x\n", "openai.upstream: must be an absolute http:// or https:// URL"),
        ("openai:\n  upstream: https://u:p@x\n", "openai.upstream: must not carry credentials"),
        ("policy:\n  synthetic_result_text: '{when}'\n", "policy: synthetic_result_text may use {name}"),
        ("- a\n- b\n", "the top level must be a mapping"),
        ("port: [\n", "line 2"),
    ],
)
def test_bad_config_is_one_clear_line(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(write(tmp_path, text))
    message = str(info.value)
    assert expected in message
    assert "\n" not in message


def test_unknown_env_key_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREEM", "http://x")
    with pytest.raises(ConfigError, match=r"openai\.upstreem: unknown setting"):
        load_settings()


def test_named_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "missing.yaml")


def test_secrets_come_from_env_only_and_never_print(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="SUTURE_OPENAI_UPSTREAM_API_KEY"):
        load_settings(write(tmp_path, "openai:\n  upstream_api_key: sk-in-a-file\n"))
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREAM_API_KEY", "sk-upstream-canary")
    monkeypatch.setenv("SUTURE_OPENAI_CLIENT_API_KEY", "client-canary")
    settings = load_settings()
    assert settings.openai.upstream_api_key is not None
    assert settings.openai.upstream_api_key.get_secret_value() == "sk-upstream-canary"
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert "canary" not in text


def test_proxy_credentials_come_from_env_only_and_never_print(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"upstream_proxy holds credentials.*SUTURE_UPSTREAM_PROXY") as info:
        load_settings(write(tmp_path, "upstream_proxy: http://bob:file-canary@proxy.corp:3128\n"))
    assert "canary" not in str(info.value)
    assert load_settings(write(tmp_path, "upstream_proxy: http://proxy.corp:3128\n")).upstream_proxy is not None
    monkeypatch.setenv("SUTURE_UPSTREAM_PROXY", "http://bob:env-canary@proxy.corp:3128")
    settings = load_settings()
    assert settings.upstream_proxy is not None
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert "canary" not in text
    monkeypatch.setenv("SUTURE_UPSTREAM_PROXY", "socks5://bob:env-canary@proxy.corp:1080")
    with pytest.raises(ConfigError, match="upstream_proxy: must be an http://host:port URL") as info:
        load_settings()
    assert "canary" not in str(info.value)


def test_client_key_needs_an_upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUTURE_ANTHROPIC_CLIENT_API_KEY", "client-canary")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "anthropic: client_api_key needs upstream_api_key" in str(info.value)
    assert "canary" not in str(info.value)
