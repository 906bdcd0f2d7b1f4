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


# Each passed validation once and then failed in the upstream client: a traceback at start-up
# (UnicodeEncodeError, "Port out of range") or a 502 on every request (a host no resolver takes).
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://exa mple.com", "openai.upstream: the host 'exa mple.com' is not a valid host name"),
        ("http://example.com /v1", "openai.upstream: the host 'example.com ' is not a valid host name"),
        ("http://exa%20mple.com", "openai.upstream: the host 'exa%20mple.com' is not a valid host name"),
        ("http://a..b", "openai.upstream: the host 'a..b' is not a valid host name"),
        (f"http://{'a' * 64}.com", "is not a valid host name"),
        ("http://example.com/vü", "upstream: the path must be ASCII without spaces; percent-encode it: /v%C3%BC"),
        ("http://example.com/a b", "openai.upstream: the path must be ASCII without spaces; percent-encode it: /a%20b"),
        ("http://example.com:70000", "openai.upstream: the port must be a number from 1 to 65535"),
        ("http://example.com:0", "openai.upstream: the port must be a number from 1 to 65535"),
        ("http://example.com:+80", "openai.upstream: the port must be a number from 1 to 65535"),
    ],
)
def test_upstream_the_client_cannot_reach_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, url: str, expected: str
) -> None:
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREAM", url)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://[::1]:8080",
        "https://bücher.example/v1",  # an IDN host goes out as its xn-- form
        "http://my_service:8000",  # compose and swarm service names hold underscores
        "http://example.com/v%C3%BC",
        "https://example.com.",
    ],
)
def test_upstream_urls_the_client_can_reach_load(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREAM", url)
    assert load_settings().openai.upstream == url


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "upstreams: {m: {protocol: openai, base_url: 'http://exa mple.com'}}\n",
            "upstreams.m.base_url: the host 'exa mple.com' is not a valid host name",
        ),
        (
            "upstreams: {m: {protocol: anthropic, base_url: 'http://example.com/vü'}}\n",
            "upstreams.m.base_url: the path must be ASCII",
        ),
        (
            "upstreams: {m: {protocol: litellm, api_base: 'http://example.com:70000'}}\n",
            "upstreams.m.api_base: the port must be a number from 1 to 65535",
        ),
        ("bedrock:\n  upstream: 'https://exa mple.com'\n", "bedrock.upstream: the host"),
    ],
)
def test_named_upstream_the_client_cannot_reach_is_a_config_error(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(write(tmp_path, text))
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://bob:canary@pro xy.corp:3128", "upstream_proxy: the host is not a valid host name"),
        ("http://bob:canary@a..b:3128", "upstream_proxy: the host is not a valid host name"),
        ("http://bob:canary@proxy.corp:0", "upstream_proxy: the port must be a number from 1 to 65535"),
        ("http://bob:canary@proxy.corp:70000", "upstream_proxy: has an invalid port"),
        ("http://bob:canary/x@proxy.corp:3128", "upstream_proxy: must be just http://host:port"),
    ],
)
def test_proxy_the_client_cannot_reach_is_a_config_error_without_its_password(
    monkeypatch: pytest.MonkeyPatch, url: str, expected: str
) -> None:
    monkeypatch.setenv("SUTURE_UPSTREAM_PROXY", url)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert expected in str(info.value)
    assert "canary" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SUTURE_OPENAI_RETRIES", "{attempts: 2", "SUTURE_OPENAI_RETRIES is not valid JSON: Expecting property name"),
        ("SUTURE_TIMEOUTS", "{", "SUTURE_TIMEOUTS is not valid JSON"),
        ("SUTURE_ROUTES", "[{'match': 'x'}]", "SUTURE_ROUTES is not valid JSON"),
        ("SUTURE_OPENAI", '{"upstream_api_key": "sk-canary}', "SUTURE_OPENAI is not valid JSON"),
    ],
)
def test_malformed_json_in_the_environment_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    # pydantic-settings parses a section's variable as JSON and raises its own SettingsError,
    # which named neither the variable nor the problem.
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert expected in message
    assert "\n" not in message
    assert "canary" not in message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("sk-canary-key\n", "has a space or line break at either end"),
        (" sk-canary-key", "has a space or line break at either end"),
        ("sk-canary-kéy", "may hold only printable ASCII characters"),
        ("sk-canary\r\nx-injected: 1", "may hold only printable ASCII characters"),
        ("", "is empty"),
    ],
)
def test_key_no_header_can_carry_is_a_config_error(monkeypatch: pytest.MonkeyPatch, value: str, expected: str) -> None:
    # A key file's final newline made every request a 502 (the upstream client refuses a header
    # with a line break) and a client key no request could match; a non-Latin-1 key a 500.
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREAM_API_KEY", value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert f"openai.upstream_api_key: {expected}" in str(info.value)
    assert "canary" not in str(info.value)
    monkeypatch.setenv("SUTURE_OPENAI_UPSTREAM_API_KEY", "sk-upstream")
    monkeypatch.setenv("SUTURE_OPENAI_CLIENT_API_KEY", value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert f"openai.client_api_key: {expected}" in str(info.value)
    assert "canary" not in str(info.value)


def test_capture_dir_that_cannot_hold_captures_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each capture used to fail on its own ("capture not written"), request after request.
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    monkeypatch.setenv("SUTURE_CAPTURE_DIR", str(afile))
    with pytest.raises(ConfigError, match=f"capture.dir: {afile} is a file, not a directory"):
        load_settings()
    monkeypatch.setenv("SUTURE_CAPTURE_DIR", str(afile / "captures"))
    with pytest.raises(ConfigError, match=f"capture.dir: {afile} is a file, so {afile / 'captures'} cannot be made"):
        load_settings()
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    monkeypatch.setenv("SUTURE_CAPTURE_DIR", str(readonly / "captures"))
    with monkeypatch.context() as patched:
        patched.setattr("os.access", lambda path, mode: Path(path) != readonly)  # tests may run as root
        with pytest.raises(ConfigError, match=f"capture.dir: {readonly} is not writable by Suture's user"):
            load_settings()
    monkeypatch.setenv("SUTURE_CAPTURE_DIR", str(tmp_path / "new" / "captures"))
    assert load_settings().capture.dir == tmp_path / "new" / "captures"


def test_every_field_of_the_repair_policy_can_be_set() -> None:
    """What a rule's documentation calls a policy (bridge_text, trailing_assistant...) is a setting."""
    import dataclasses

    from proxy.settings import PolicySettings
    from sanitizer import Policy

    assert {f.name for f in dataclasses.fields(Policy)} == set(PolicySettings.model_fields)
    policy = Settings(policy={"bridge_text": "(Results in.)"}).policy.to_policy()
    assert policy.bridge_text == "(Results in.)"
