"""The learnt profiles' store: what a lesson stands for, expiry, two processes sharing one file,
and a damaged file named, not lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.learnt import LearntProfiles, ProfilesFileError, model_pattern
from sanitizer.rejection import Lesson, apply_lessons

PORTABLE = Lesson("RJ011")
FIREWORKS = Lesson("rules", codes=("fireworks.extra-input",))


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("model", "pattern"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o*"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5*"),
        ("qwen3-coder:latest", "qwen3-coder*"),
        ("glm-4.6", "glm-4.6"),
        ("accounts/fireworks/models/glm-5p3-flash", "accounts/fireworks/models/glm-5p3-flash"),
    ],
)
def test_a_lesson_stands_for_later_snapshots_of_its_model(model: str, pattern: str) -> None:
    assert model_pattern(model) == pattern


def test_lessons_are_per_upstream_where_it_points_and_model(tmp_path: Path) -> None:
    store = LearntProfiles(tmp_path / "p.json", expire_seconds=3600)
    store.learn("mystery", "http://a/v1", "coder-2026-01-01", PORTABLE, "Bad Request")
    assert store.lessons_for("mystery", "http://a/v1", "coder-2026-02-01") == (PORTABLE,)
    assert store.lessons_for("mystery", "http://b/v1", "coder-2026-02-01") == ()
    assert store.lessons_for("other", "http://a/v1", "coder-2026-02-01") == ()
    assert store.lessons_for("mystery", "http://a/v1", "writer") == ()


def test_a_lesson_expires_and_learning_it_again_starts_its_time_again(tmp_path: Path) -> None:
    clock = Clock()
    store = LearntProfiles(tmp_path / "p.json", expire_seconds=100, clock=clock)
    first = store.learn("u", "http://a", "m", PORTABLE, "")
    assert first is not None
    assert store.learn("u", "http://a", "m", PORTABLE, "") is None  # known: not counted again
    clock.now += 101
    store._checked = float("-inf")  # the next lookup looks again (it does so once a second)
    assert store.lessons_for("u", "http://a", "m") == ()
    assert store.learn("u", "http://a", "m", PORTABLE, "") is not None
    assert store.lessons_for("u", "http://a", "m") == (PORTABLE,)


def test_two_processes_learning_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    one, two = LearntProfiles(path, expire_seconds=3600), LearntProfiles(path, expire_seconds=3600)
    one.learn("u", "http://a", "m", PORTABLE, "")
    two.learn("u", "http://a", "m", FIREWORKS, "")
    three = LearntProfiles(path, expire_seconds=3600)
    assert {e.lesson for e in three.entries()} == {PORTABLE, FIREWORKS}


def test_a_forget_elsewhere_reaches_a_running_store(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    running = LearntProfiles(path, expire_seconds=3600)
    running.learn("u", "http://a", "m", PORTABLE, "")
    assert running.lessons_for("u", "http://a", "m") == (PORTABLE,)
    LearntProfiles(path, expire_seconds=3600).forget(lambda e: e.upstream == "u")
    running._checked = float("-inf")
    assert running.lessons_for("u", "http://a", "m") == ()


def test_without_a_file_lessons_live_in_memory() -> None:
    store = LearntProfiles(None, expire_seconds=3600)
    store.learn("u", "http://a", "m", PORTABLE, "")
    assert store.lessons_for("u", "http://a", "m") == (PORTABLE,)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "is not JSON"),
        ('{"profiles": {}}', "not a profiles file"),
        ('{"version": 7, "profiles": []}', "has version 7"),
        ('{"version": 1, "profiles": [{"upstream": "u", "base_url": "b", "models": "m"}]}', r"profiles\[0\]"),
        (
            '{"version": 1, "profiles": [{"upstream": "u", "base_url": "b", "models": "m", "fix": "RJ011",'
            ' "learnt_at": "yesterday", "expires_at": 1}]}',
            "learnt_at",
        ),
    ],
)
def test_a_damaged_file_is_named(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(ProfilesFileError, match=said):
        LearntProfiles(path, expire_seconds=3600)


def test_a_file_damaged_while_running_keeps_what_was_known(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    running = LearntProfiles(path, expire_seconds=3600)
    running.learn("u", "http://a", "m", PORTABLE, "")
    path.write_text("{half a file")
    running._checked = float("-inf")
    assert running.lessons_for("u", "http://a", "m") == (PORTABLE,)
    assert path.read_text() == "{half a file"  # left for a person to mend, not overwritten


def test_lessons_apply_rules_of_the_violations_they_name() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello", "cot_id": "c1"},
            {"role": "user", "content": "Go on"},
        ],
    }
    result = apply_lessons(body, api="openai-chat", lessons=(FIREWORKS,))
    assert "cot_id" not in result.body["messages"][1] and result.body["messages"][1]["content"] == "Hello"
    assert [r.code for r in result.repairs] == ["PV009"]
    assert "cot_id" in body["messages"][1]  # the input is never mutated
    assert apply_lessons(body, api="openai-chat", lessons=(Lesson("RJ999"),)).body is body


def test_the_capture_directory_never_lists_nor_evicts_the_learnt_fixes(tmp_path: Path) -> None:
    from proxy.capture import CaptureStore
    from proxy.settings import IN_CAPTURE_DIR

    store = LearntProfiles(tmp_path / IN_CAPTURE_DIR, expire_seconds=3600)
    store.learn("u", "http://a", "m", PORTABLE, "")
    (tmp_path / "20261207T210000000000-req1.json").write_text("{}" + " " * 4096)
    captures = CaptureStore(tmp_path, max_bytes=1)
    assert [p.name for p in captures.files()] == ["20261207T210000000000-req1.json"]
    captures.evict()
    assert (tmp_path / IN_CAPTURE_DIR).exists()
    assert store.lessons_for("u", "http://a", "m") == (PORTABLE,)
