"""``suture demo``: Suture in front of the strict emulator, on loopback ports, in this process.

One broken transcript goes through the official OpenAI and Anthropic SDKs, first straight to the
emulator (the provider's 400), then through Suture (200), and the demo prints what Suture did to
it. Nothing to configure and no network: the emulator stands in for both providers, so a dummy
key does, and no ``SUTURE_*`` variable is read (one naming a real upstream would send the demo there).
"""

from __future__ import annotations

import contextlib
import http
import importlib
import importlib.metadata
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..settings import Settings

HOST = "127.0.0.1"
DUMMY_KEY = "sk-suture-demo-dummy-key"
# Past this, the start-up time is printed, split between the servers and the SDKs' imports.
SLOW_START_SECONDS = 2.0

# Seed 000 (agentscope-java 2.0.0, README's case): interrupted after the model asked for slow_tool
# and before the tool ran, the framework appended its recovery text and the user's next message,
# and the tool call never got its result. The bodies are the golden seeds' `before`
# (tests/sanitizer/golden/seeds/000-*.json).
_SYSTEM = "你是测试 agent，按用户要求调用工具。"
_TASK = "请调用 slow_tool 完成任务"
_RECOVERY = "I noticed that you have interrupted me. What can I do for you?"
_CORRECTION = "停！换个做法：直接回答 42"
_TOOL = {"name": "slow_tool", "description": "一个慢工具，模拟长时间执行"}
_NO_PARAMETERS = {"type": "object", "properties": {}}

OPENAI_BODY: dict[str, Any] = {
    "model": "gpt-4o",
    "tools": [{"type": "function", "function": {**_TOOL, "parameters": _NO_PARAMETERS}}],
    "messages": [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": _TASK},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "tc_slow_1", "type": "function", "function": {"name": "slow_tool", "arguments": "{}"}}
            ],
        },
        {"role": "assistant", "content": _RECOVERY},
        {"role": "user", "content": _CORRECTION},
    ],
}
ANTHROPIC_BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": _SYSTEM,
    "tools": [{**_TOOL, "input_schema": _NO_PARAMETERS}],
    "messages": [
        {"role": "user", "content": _TASK},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tc_slow_1", "name": "slow_tool", "input": {}}]},
        {"role": "assistant", "content": [{"type": "text", "text": _RECOVERY}]},
        {"role": "user", "content": [{"type": "text", "text": _CORRECTION}]},
    ],
}


@dataclass(frozen=True)
class Answer:
    """What an SDK call came back with: the status (None: no answer at all), the reply's text or the
    error's message, and the response headers."""

    status: int | None
    text: str
    headers: Mapping[str, str]


@dataclass(frozen=True)
class Outcome:
    """One SDK's run: the request straight to the emulator, then through Suture."""

    sdk: str
    endpoint: str
    direct: Answer
    through: Answer
    record: dict[str, Any] | None
    """The capture the page kept of the request through Suture (original, forwarded, repairs)."""
    page: str | None
    """That request's own page."""

    @property
    def repairs(self) -> int:
        try:
            return int(self.through.headers.get("x-suture-repairs", "0"))
        except ValueError:
            return 0

    def problem(self) -> str | None:
        """Why this run does not show what it should, in one line; None when it does."""
        if self.direct.status != 400:
            return f"{self.sdk}: straight to the emulator: {_status(self.direct.status)} instead of 400"
        if self.through.status != 200:
            return f"{self.sdk}: through Suture: {_status(self.through.status)}: {self.through.text}"
        if not self.repairs:
            return f"{self.sdk}: through Suture: 200, but nothing was repaired (x-suture-repairs: 0)"
        return None


def run(*, check: bool, port: int | None) -> int:
    """Start the emulator and Suture, send the transcript through both SDKs, print what happened;
    then (unless ``check``) serve until SIGINT or SIGTERM. 0 when both SDKs showed the repair."""
    started = time.monotonic()
    try:
        with contextlib.ExitStack() as servers:
            try:
                emulator_socket = servers.enter_context(_bound(0))
                suture_socket = servers.enter_context(_bound(port or 0))
            except OSError as exc:
                print(f"suture demo: cannot listen on {HOST}:{port or 0}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            sdks = _Importer(("openai", "anthropic"))
            sdks.start()  # seconds of imports, while the servers start
            emulator = f"http://{HOST}:{emulator_socket.getsockname()[1]}"
            suture = f"http://{HOST}:{suture_socket.getsockname()[1]}"
            settings = _settings(emulator, suture_socket.getsockname()[1])
            try:
                servers.enter_context(_serving(_emulator_app(), emulator_socket))
                servers.enter_context(_serving(_suture_app(settings), suture_socket))
            except RuntimeError as exc:
                print(f"suture demo: {exc}", file=sys.stderr)
                return 1
            ready = time.monotonic()
            _introduce(emulator, suture)
            sdks.join()
            if sdks.error is not None:
                print(
                    f"suture demo: the demo sends its requests with the official SDKs: {sdks.error} "
                    "(pip install 'suture[demo]': the official openai and anthropic SDKs)",
                    file=sys.stderr,
                )
                return 2
            elapsed = time.monotonic() - started
            if elapsed > SLOW_START_SECONDS:
                print(
                    f"(ready in {elapsed:.1f} s: the emulator and Suture took {ready - started:.1f} s, importing "
                    f"the openai and anthropic SDKs {sdks.seconds:.1f} s, side by side)"
                )
            return _demonstrate(emulator, suture, f"{suture}{settings.ui.path}/", check=check)
    except KeyboardInterrupt:
        print("\nsuture demo: interrupted", file=sys.stderr)
        return 130


def _demonstrate(emulator: str, suture: str, page: str, *, check: bool) -> int:
    outcomes = [
        _show(_run("OpenAI SDK", "openai", "POST /v1/chat/completions", _via_openai, emulator, suture, page)),
        _show(_run("Anthropic SDK", "anthropic", "POST /v1/messages", _via_anthropic, emulator, suture, page)),
    ]
    _point_at(page, suture)
    problems = [p for p in (o.problem() for o in outcomes) if p is not None]
    if problems:
        print(f"suture demo: failed: {problems[0]}", file=sys.stderr)
        return 1
    codes = ", ".join(sorted({c for o in outcomes for c in _codes(o.record)}))
    if check:
        print(f"ok: both SDKs got 400 straight from the emulator and 200 through Suture, which repaired {codes}")
        return 0
    print("Ctrl-C stops it.", flush=True)
    _wait_for_a_stop()
    print("\nsuture demo: stopped", flush=True)
    return 0


@contextlib.contextmanager
def _bound(port: int) -> Iterator[socket.socket]:
    """A listening socket on ``HOST:port`` (0: a free port), closed when the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
        yield sock


class _Importer(threading.Thread):
    """Imports modules in the background, timing it and keeping the error if one fails."""

    def __init__(self, modules: tuple[str, ...]) -> None:
        super().__init__(name="suture-demo-imports", daemon=True)
        self.modules = modules
        self.error: Exception | None = None
        self.seconds = 0.0

    def run(self) -> None:
        started = time.monotonic()
        try:
            for name in self.modules:
                importlib.import_module(name)
        except Exception as exc:  # missing or broken, it is said on the main thread
            self.error = exc
        self.seconds = time.monotonic() - started


def _settings(emulator: str, port: int) -> Settings:
    from ..settings import Settings

    class DemoSettings(Settings):
        # The arguments only: the environment's SUTURE_* variables are for the user's own Suture.
        @classmethod
        def settings_customise_sources(cls, settings_cls: Any, init_settings: Any, *args: Any, **kwargs: Any) -> Any:
            return (init_settings,)

    values: dict[str, Any] = {
        "host": HOST,
        "port": port,
        "openai": {"upstream": emulator + "/v1"},
        "anthropic": {"upstream": emulator},
        "ui": {"enabled": True},
    }
    return DemoSettings(**values)


def _emulator_app() -> Any:
    from ..emulator import EmulatorConfig, build_emulator_app

    # The API routes speak their own provider's dialect whatever the config's provider.
    return build_emulator_app(EmulatorConfig())


def _suture_app(settings: Settings) -> Any:
    from ..app import build_app

    return build_app(settings)


@contextlib.contextmanager
def _serving(app: Any, sock: socket.socket) -> Iterator[None]:
    """``app`` served by uvicorn on ``sock`` in a thread of its own, until the block ends."""
    import uvicorn

    from ..server_protocol import SutureHttpProtocol

    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        http=SutureHttpProtocol,  # as `suture serve` runs it
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=1,  # the page's live list is a stream that stays open
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the server on {HOST}:{port} did not start")
        time.sleep(0.005)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _introduce(emulator: str, suture: str) -> None:
    print("Suture demo: nothing to configure, and nothing leaves this machine.")
    print(f"  emulator  {emulator}  a strict stand-in for the OpenAI and Anthropic APIs: their 400s")
    print(f"  Suture    {suture}  its upstreams: the emulator")
    print(f"  key       {DUMMY_KEY}  a dummy: the emulator takes any key")
    print()
    print("The transcript: the model asked for slow_tool, the user interrupted before the tool ran, and the")
    print(f'agent framework added "{_RECOVERY.split(".")[0]}..." and the user\'s next message.')
    print("The tool call never got its result.")


def _run(
    sdk: str, package: str, endpoint: str, send: Callable[[str], Answer], emulator: str, suture: str, page: str
) -> Outcome:
    label = f"{sdk} {importlib.metadata.version(package)}"
    direct = send(emulator)
    through = send(suture)
    request_id = through.headers.get("x-suture-request-id")
    if request_id is None:
        return Outcome(label, endpoint, direct, through, None, None)
    return Outcome(label, endpoint, direct, through, _kept(page, request_id), f"{page}requests/{request_id}")


def _via_openai(base_url: str) -> Answer:
    import openai

    # trust_env=False: an HTTP(S)_PROXY of the user's must not carry loopback requests away.
    http_client = openai.DefaultHttpxClient(trust_env=False)
    with openai.OpenAI(base_url=base_url + "/v1", api_key=DUMMY_KEY, max_retries=0, http_client=http_client) as client:
        try:
            raw = client.chat.completions.with_raw_response.create(**OPENAI_BODY)
        except openai.APIStatusError as exc:
            return Answer(exc.status_code, _message(exc.body) or exc.message, exc.response.headers)
        except openai.APIConnectionError as exc:
            return Answer(None, str(exc), {})
        completion = raw.parse()
        return Answer(raw.status_code, completion.choices[0].message.content or "", raw.headers)


def _via_anthropic(base_url: str) -> Answer:
    import anthropic

    http_client = anthropic.DefaultHttpxClient(trust_env=False)
    with anthropic.Anthropic(base_url=base_url, api_key=DUMMY_KEY, max_retries=0, http_client=http_client) as client:
        try:
            raw = client.messages.with_raw_response.create(**ANTHROPIC_BODY)
        except anthropic.APIStatusError as exc:
            return Answer(exc.status_code, _message(exc.body) or exc.message, exc.response.headers)
        except anthropic.APIConnectionError as exc:
            return Answer(None, str(exc), {})
        message = raw.parse()
        text = "".join(block.text for block in message.content if block.type == "text")
        return Answer(raw.status_code, text, raw.headers)


def _message(body: object) -> str | None:
    """The provider's error message: OpenAI's SDK keeps the ``error`` object, Anthropic's the whole body."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) else None


def _kept(page: str, request_id: str) -> dict[str, Any] | None:
    """The capture of the request the page keeps (the repaired ones), or None."""
    import httpx

    try:
        response = httpx.get(f"{page}requests/{request_id}/capture.json", trust_env=False, timeout=10)
        record = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _codes(record: dict[str, Any] | None) -> list[str]:
    return [str(r.get("code")) for r in (record or {}).get("repairs") or () if isinstance(r, dict)]


def _show(outcome: Outcome) -> Outcome:
    from sanitizer import Repair

    from ._common import print_diff, repair_line

    print()
    print(f"== {outcome.sdk}: {outcome.endpoint} ==")
    print(f"Straight to the emulator: {_status(outcome.direct.status)}: {outcome.direct.text}")
    if outcome.through.status == 200:
        print(f"Through Suture:           200 OK; the emulated model answered: {outcome.through.text}")
    else:
        print(f"Through Suture:           {_status(outcome.through.status)}: {outcome.through.text}")
    record = outcome.record
    if record is not None:
        repairs = [r for r in record.get("repairs") or () if isinstance(r, dict)]
        print()
        print_diff(record.get("original"), record.get("forwarded"), repairs, str(record.get("api")))
        print()
        print(f"Repairs (x-suture-repairs: {outcome.repairs}):")
        for r in repairs:
            print("  " + repair_line(Repair(**r)))
        print(f"On the page: {outcome.page}")
    elif outcome.through.status is not None:
        print(f"Repairs (x-suture-repairs: {outcome.repairs}); the page kept no capture of the request")
    return outcome


def _point_at(page: str, suture: str) -> None:
    print()
    print(f"The page (each request, its transcript before and after): {page}")
    print("Point your agent at it (answers come from the emulator; any key will do):")
    print(f"  OPENAI_BASE_URL={suture}/v1")
    print(f"  ANTHROPIC_BASE_URL={suture}")


def _status(status: int | None) -> str:
    if status is None:
        return "no answer"
    try:
        return f"{status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _wait_for_a_stop() -> None:
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
