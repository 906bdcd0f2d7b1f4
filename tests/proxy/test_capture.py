"""Captures: written on repair and on a provider's rejection, secret-free, atomic, bounded, and
usable as input to `suture check|fix|replay` and `suture captures list|show`."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from proxy import capture as capture_module
from proxy import cli
from proxy.capture import CaptureDraft, CaptureStore
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import load_settings
from sanitizer import sanitize
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import running_server

GOLDEN = Path(__file__).resolve().parents[1] / "sanitizer" / "golden"
SEED = json.loads((GOLDEN / "seeds" / "000-anthropic-messages.json").read_text(encoding="utf-8"))
OPENAI_SEED = json.loads((GOLDEN / "seeds" / "000-openai-chat.json").read_text(encoding="utf-8"))
ANTHROPIC_KEY = "sk-ant-api03-FAKE-capture-test-key-0123456789"
OPENAI_KEY = "sk-proj-FAKE-capture-test-key-9876543210"
ANTHROPIC_HEADERS = {
    "x-api-key": ANTHROPIC_KEY,
    "anthropic-version": "2023-06-01",
    "authorization": f"Bearer {ANTHROPIC_KEY}-bearer",
    "cookie": "session=cookie-secret-value",
    "content-type": "application/json",
}


def captures(directory: Path) -> list[dict[str, Any]]:
    return [orjson.loads(p.read_bytes()) for p in CaptureStore(directory).files()]


def assert_no_secrets(directory: Path, *secrets: str) -> None:
    for path in directory.iterdir():
        text = path.read_text(encoding="utf-8")
        for secret in (*secrets, "cookie-secret-value"):
            assert secret not in text, f"{secret!r} stored in {path.name}"


def assert_no_temp_files(directory: Path) -> None:
    assert [p.name for p in directory.iterdir() if not p.name.endswith(".json")] == []


@pytest.fixture(scope="module")
def anthropic_emulator() -> Iterator[str]:
    with running_server(build_emulator_app(EmulatorConfig(provider="anthropic"))) as url:
        yield url


class Rejecting:
    """An upstream that rejects every request with a gzipped 400 echoing the caller's key, the way
    a provider might quote a credential back."""

    def app(self) -> Starlette:
        async def reject(request: Request) -> JSONResponse:
            key = request.headers.get("x-api-key", "")
            message = f"messages.3: a rule nobody knows yet (key {key})"
            return JSONResponse(
                {"type": "error", "error": {"type": "invalid_request_error", "message": message}}, status_code=400
            )

        return Starlette(
            routes=[Route("/{path:path}", reject, methods=["POST"])],
            middleware=[Middleware(GZipMiddleware, minimum_size=1)],
        )


@pytest.mark.slow
def test_repaired_request_is_captured_without_secrets(tmp_path: Path, anthropic_emulator: str) -> None:
    directory = tmp_path / "captures"
    with suture(anthropic={"upstream": anthropic_emulator}, capture={"dir": directory}) as url:
        response = httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS)
        assert response.status_code == 200
        # A clean transcript the provider accepts is not captured.
        assert httpx.post(url + "/v1/messages", json=SEED["after"], headers=ANTHROPIC_HEADERS).status_code == 200
        [record] = wait_for(lambda: captures(directory))
    assert record["suture_capture"] == 1
    assert record["request_id"] == response.headers["x-suture-request-id"]
    assert (record["route"], record["path"], record["api"], record["mode"]) == (
        "anthropic",
        "/v1/messages",
        "anthropic-messages",
        "repair",
    )
    assert record["original"] == SEED["before"]
    assert record["forwarded"] == SEED["after"]
    assert record["repairs"] == SEED["repairs"]
    assert record["upstream_status"] == 200
    assert record["unrepaired_rejection"] is False
    assert "upstream_error" not in record
    assert record["headers"] == {"anthropic-version": "2023-06-01", "content-type": "application/json"}
    assert record["timestamp"].endswith("Z")
    assert_no_secrets(directory, ANTHROPIC_KEY)
    assert_no_temp_files(directory)


def test_a_body_nested_deeper_than_orjson_writes_is_captured_whole(tmp_path: Path, anthropic_emulator: str) -> None:
    # orjson reads 1,024 levels and writes 254: the capture of such a body must not be lost.
    deep = orjson.loads("[" * 300 + "1" + "]" * 300)
    body = json.loads(json.dumps(SEED["before"]))
    body["messages"][1]["content"][0]["input"] = {"deep": deep}
    with suture(anthropic={"upstream": anthropic_emulator}, capture={"dir": tmp_path}) as url:
        response = httpx.post(url + "/v1/messages", content=json.dumps(body), headers=ANTHROPIC_HEADERS)
        assert response.status_code == 200, response.text
        assert response.headers["x-suture-repairs"] == "1"
        [record] = wait_for(lambda: captures(tmp_path))
    assert record["original"] == body
    assert record["forwarded"]["messages"][1]["content"][0]["input"] == {"deep": deep}
    assert record["forwarded"]["messages"][2]["content"][0]["type"] == "tool_result"


@pytest.mark.slow
def test_streamed_repaired_request_is_captured(tmp_path: Path, anthropic_emulator: str) -> None:
    body = {**SEED["before"], "stream": True}
    with suture(anthropic={"upstream": anthropic_emulator}, capture={"dir": tmp_path}) as url:
        with httpx.stream("POST", url + "/v1/messages", json=body, headers=ANTHROPIC_HEADERS) as response:
            assert response.status_code == 200
            assert b"message_stop" in response.read()
        [record] = wait_for(lambda: captures(tmp_path))
    assert record["upstream_status"] == 200
    assert record["forwarded"]["stream"] is True
    assert "upstream_error" not in record


@pytest.mark.slow
def test_provider_rejection_is_captured_with_its_error(tmp_path: Path, anthropic_emulator: str) -> None:
    # Report mode forwards the broken original, so the provider answers its 400.
    with suture(anthropic={"upstream": anthropic_emulator, "mode": "report"}, capture={"dir": tmp_path}) as url:
        response = httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS)
        assert response.status_code == 400
        [record] = wait_for(lambda: captures(tmp_path))
    assert record["upstream_status"] == 400
    assert record["upstream_error"] == response.json()
    assert record["upstream_error_truncated"] is False
    assert record["forwarded"] is None
    assert record["repairs_applied"] is False
    assert record["repairs"] == SEED["repairs"]
    assert record["unrepaired_rejection"] is False
    assert_no_secrets(tmp_path, ANTHROPIC_KEY)


@pytest.mark.slow
def test_rejection_after_repair_is_marked_and_logged_loudly(tmp_path: Path, logs: LogLines) -> None:
    with (
        running_server(Rejecting().app()) as upstream,
        suture(anthropic={"upstream": upstream}, capture={"dir": tmp_path}) as url,
    ):
        response = httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS)
        assert response.status_code == 400
        assert response.headers["content-encoding"] == "gzip"
        [record] = wait_for(lambda: captures(tmp_path))
    assert record["unrepaired_rejection"] is True
    assert record["upstream_status"] == 400
    # Decoded from gzip, and the echoed key blanked out.
    assert record["upstream_error"]["error"]["message"] == "messages.3: a rule nobody knows yet (key [redacted])"
    assert_no_secrets(tmp_path, ANTHROPIC_KEY)
    [warning] = logs.records("suture.repair", request_id=record["request_id"], level="warning")
    assert warning["event"] == "provider still rejected the repaired transcript: a rule Suture does not know yet"
    assert warning["repairs_applied"] == 1
    assert warning["captured"] is True


@pytest.mark.slow
def test_rejection_after_repair_is_logged_even_without_capture(logs: LogLines) -> None:
    with running_server(Rejecting().app()) as upstream, suture(anthropic={"upstream": upstream}) as url:
        assert httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS).status_code == 400
        [warning] = wait_for(lambda: logs.records("suture.repair", level="warning"))
    assert warning["captured"] is False


@pytest.mark.slow
def test_openai_bearer_key_never_stored(tmp_path: Path) -> None:
    with (
        running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as upstream,
        suture(openai={"upstream": upstream + "/v1"}, capture={"dir": tmp_path}) as url,
    ):
        headers = {"authorization": f"Bearer {OPENAI_KEY}", "openai-organization": "org-secret-org-id"}
        assert httpx.post(url + "/v1/chat/completions", json=OPENAI_SEED["before"], headers=headers).status_code == 200
        broken = {**OPENAI_SEED["before"], "messages": []}
        assert httpx.post(url + "/v1/chat/completions", json=broken, headers=headers).status_code == 400
        records = wait_for(lambda: len(captures(tmp_path)) == 2 and captures(tmp_path))
    assert [r["upstream_status"] for r in records] == [200, 400]
    assert_no_secrets(tmp_path, OPENAI_KEY, "org-secret-org-id")


@pytest.mark.slow
def test_capture_directory_stays_bounded(tmp_path: Path, anthropic_emulator: str) -> None:
    one = len(orjson.dumps(SEED["before"])) + len(orjson.dumps(SEED["after"]))
    cap = one * 6  # room for about three captures (they are indented on disk)
    with suture(anthropic={"upstream": anthropic_emulator}, capture={"dir": tmp_path, "max_bytes": cap}) as url:
        ids = []
        for _ in range(8):
            response = httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS)
            ids.append(response.headers["x-suture-request-id"])
            wait_for(lambda: any(p.stem.endswith(ids[-1]) for p in CaptureStore(tmp_path).files()))
    kept = [r["request_id"] for r in captures(tmp_path)]
    assert 1 < len(kept) < 8
    assert kept == ids[-len(kept) :]  # the oldest went first
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= cap


@pytest.mark.slow
def test_capture_file_is_input_to_check_fix_replay_and_captures(
    tmp_path: Path, anthropic_emulator: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with suture(anthropic={"upstream": anthropic_emulator}, capture={"dir": tmp_path}) as url:
        httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS)
        [path] = wait_for(lambda: CaptureStore(tmp_path).files())
    assert cli.main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "detected api: anthropic-messages (because the Suture capture names it; read from: Suture capture)" in err
    assert "TP001 orphan-tool-call" in out
    assert cli.main(["fix", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == SEED["after"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    assert cli.main(["replay", str(path), "--to", anthropic_emulator, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["original"]["status"], report["repaired"]["status"]) == (400, 200)

    assert cli.main(["captures", "list", "--dir", str(tmp_path)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["ID", "TIME", "ROUTE", "STATUS", "REPAIRS", "NOTE"]
    assert row.split()[:6] == [path.stem, captures(tmp_path)[0]["timestamp"], "anthropic", "200", "1", "TP001"]
    assert cli.main(["captures", "show", path.stem[:12], "--dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["original"] == SEED["before"]
    assert cli.main(["captures", "show", "nope", "--dir", str(tmp_path)]) == 2
    assert "no capture 'nope'" in capsys.readouterr().err


def test_captures_needs_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["captures", "list"]) == 2
    assert "capture is off (capture.dir is not set): give --dir" in capsys.readouterr().err
    monkeypatch.setenv("SUTURE_CAPTURE_DIR", str(tmp_path))
    assert load_settings().capture.dir == tmp_path
    assert cli.main(["captures", "list"]) == 0
    assert "no captures in" in capsys.readouterr().err


@pytest.mark.slow
def test_strict_rejection_is_captured_with_suture_s_message(
    tmp_path: Path, anthropic_emulator: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with suture(anthropic={"upstream": anthropic_emulator, "mode": "strict"}, capture={"dir": tmp_path}) as url:
        response = httpx.post(url + "/v1/messages", json=SEED["before"], headers=ANTHROPIC_HEADERS)
        assert response.status_code == 400
        # A transcript strict mode lets through, and the provider accepts, leaves no capture.
        assert httpx.post(url + "/v1/messages", json=SEED["after"], headers=ANTHROPIC_HEADERS).status_code == 200
        [record] = wait_for(lambda: captures(tmp_path))
    assert record["request_id"] == response.headers["x-suture-request-id"]
    assert record["mode"] == "strict"
    assert record["upstream_status"] == "strict_rejected"
    assert record["strict_rejection"] == response.json()["error"]["message"]
    assert record["original"] == SEED["before"]
    assert record["forwarded"] is None and record["repairs_applied"] is False
    assert record["repairs"] == SEED["repairs"]
    assert "upstream_error" not in record
    assert_no_secrets(tmp_path, ANTHROPIC_KEY)
    assert cli.main(["captures", "list", "--dir", str(tmp_path)]) == 0
    assert "rejected by strict mode" in capsys.readouterr().out


def test_unrepaired_rejection_is_flagged_in_the_listing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = CaptureStore(tmp_path)
    store.write(draft().finish(400, b'{"error": "no"}'))
    assert cli.main(["captures", "list", "--dir", str(tmp_path)]) == 0
    assert "UNREPAIRED REJECTION" in capsys.readouterr().out


def draft(request_id: str = "req1", **overrides: Any) -> CaptureDraft:
    result = sanitize(SEED["before"], api="anthropic-messages")
    fields: dict[str, Any] = {
        "request_id": request_id,
        "route": "anthropic",
        "path": "/v1/messages",
        "api": "anthropic-messages",
        "mode": "repair",
        "original": SEED["before"],
        "forwarded": result.body,
        "repairs": result.repairs,
        "headers": {},
        **overrides,
    }
    return CaptureDraft(**fields)


def test_store_evicts_oldest_first_and_skips_a_capture_larger_than_the_cap(tmp_path: Path) -> None:
    size = len(orjson.dumps(draft().finish(200), option=orjson.OPT_INDENT_2))
    store = CaptureStore(tmp_path, max_bytes=size * 3 + 10)
    written = []
    for i in range(6):
        path = store.write({**draft(f"r{i}").finish(200), "timestamp": f"2026-01-01T00:00:0{i}.000Z"})
        assert path is not None
        written.append(path)
    assert store.files() == written[-3:]
    tiny = CaptureStore(tmp_path / "tiny", max_bytes=100)
    assert tiny.write(draft().finish(200)) is None
    assert tiny.files() == []


def test_same_request_id_twice_keeps_both(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path)
    record = draft("same").finish(200)
    first, second = store.write(record), store.write(record)
    assert first is not None and second is not None and first != second
    assert second.stem == first.stem + "-2"


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CaptureStore(tmp_path)

    def crash(src: Any, dst: Any) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(capture_module.os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        store.write(draft().finish(200))
    assert list(tmp_path.iterdir()) == []


def test_stale_temp_files_are_removed_at_start(tmp_path: Path) -> None:
    (tmp_path / ".tmp-0123").write_bytes(b"{half")
    (tmp_path / "keep.json").write_bytes(b"{}")
    CaptureStore(tmp_path).remove_stale_temp_files()
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]


def test_error_body_is_capped_and_secrets_blanked() -> None:
    big = b'{"error": "' + b"x" * (capture_module.MAX_ERROR_BYTES * 2) + b'"}'
    record = draft(secrets=("sk-secret-123456",)).finish(500, big[: capture_module.MAX_ERROR_BYTES])
    assert record["upstream_error_truncated"] is True
    assert len(record["upstream_error"]) == capture_module.MAX_ERROR_BYTES
    record = draft(secrets=("sk-secret-123456",)).finish(401, b'{"message": "bad key sk-secret-123456"}')
    assert record["upstream_error"] == {"message": "bad key [redacted]"}
    assert draft().finish(400, b"\x00\x01", "br")["upstream_error"] == {"undecoded": "2 bytes in content-encoding br"}


def test_submit_without_running_drops_and_shutdown_waits_for_pending_writes(tmp_path: Path, logs: LogLines) -> None:
    capturer = capture_module.Capturer(CaptureStore(tmp_path))
    capturer.submit(draft().finish(200))
    assert logs.records("suture.capture", event="capture dropped: capture is not running")

    async def serve() -> None:
        async with capturer.running():
            for i in range(3):
                capturer.submit(draft(f"r{i}").finish(200))

    anyio.run(serve)
    assert len(CaptureStore(tmp_path).files()) == 3
    assert len(logs.records("suture.capture", event="capture written")) == 3


def test_captures_are_private_to_suture_s_user(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path / "new")
    path = store.write(draft().finish(200))
    assert path is not None
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700


def disk_full(monkeypatch: pytest.MonkeyPatch, times: int) -> None:
    """The next ``times`` capture writes fail as on a full disk (ENOSPC), at the fsync that flushes them."""
    real = os.fsync
    failures: list[int] = []

    def fsync(fd: int) -> None:
        if len(failures) < times:
            failures.append(fd)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    monkeypatch.setattr(capture_module.os, "fsync", fsync)


def stamped(request_id: str, second: int, padding: int = 0) -> dict[str, Any]:
    return {
        **draft(request_id).finish(200),
        "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
        "padding": "x" * padding,
    }


def test_disk_full_evicts_the_oldest_captures_and_writes_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: LogLines
) -> None:
    store = CaptureStore(tmp_path)
    # Each old capture is larger than the new one: evicting the oldest alone makes room.
    old = [store.write(stamped(f"old{i}", i, padding=50_000)) for i in range(3)]
    disk_full(monkeypatch, times=1)
    new = store.write(stamped("new", 10))
    assert new is not None
    assert store.files() == [old[1], old[2], new]
    [evicted] = logs.records("suture.capture", event="disk full: oldest captures evicted")
    assert (evicted["level"], evicted["request_id"], evicted["evicted"]) == ("warning", "new", 1)
    assert evicted["freed_bytes"] > 50_000
    later = store.write(stamped("later", 11))
    assert store.files() == [old[1], old[2], new, later]
    assert_no_temp_files(tmp_path)


def test_disk_full_with_nothing_to_evict_drops_that_capture_and_captures_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: LogLines
) -> None:
    disk_full(monkeypatch, times=1)
    capturer = capture_module.Capturer(CaptureStore(tmp_path))

    async def serve() -> None:
        async with capturer.running():
            capturer.submit(stamped("first", 1))
            capturer.submit(stamped("second", 2))

    anyio.run(serve)
    [dropped] = logs.records("suture.capture", request_id="first")
    assert dropped["level"] == "warning"
    assert dropped["event"] == "capture dropped: the disk is full and no older capture is left to evict"
    assert logs.records("suture.capture", event="capture written", request_id="second")
    assert [p.stem for p in CaptureStore(tmp_path).files()] == ["20260101T000002000Z-second"]
    assert_no_temp_files(tmp_path)


def test_disk_still_full_after_eviction_drops_that_capture_and_captures_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: LogLines
) -> None:
    store = CaptureStore(tmp_path)
    store.write(stamped("old", 0, padding=50_000))
    disk_full(monkeypatch, times=2)
    capturer = capture_module.Capturer(store)

    async def serve() -> None:
        async with capturer.running():
            capturer.submit(stamped("new", 1))
            capturer.submit(stamped("later", 2))

    anyio.run(serve)
    assert [line["event"] for line in logs.records("suture.capture", request_id="new")] == [
        "disk full: oldest captures evicted",
        "capture dropped: the disk is still full after evicting old captures",
    ]
    assert [p.stem for p in store.files()] == ["20260101T000002000Z-later"]
    assert_no_temp_files(tmp_path)
