"""UI-1: one Vodou per person. Two real ``vodou`` processes (offscreen Qt): the second launch asks
the first to show its memory browser and exits 0; ``--background`` (start at login) exits 0 without
bringing anything forward."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SHOW_LOG = "another launch of Vodou asked this one to show its memory browser"
HANG_GUARD_S = 120  # only stops a hung test; not a speed assertion (speed is not measured here)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate, what: str, proc: subprocess.Popen[str] | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + HANG_GUARD_S
    while not predicate():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the first vodou exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def env(vodou_home: Path) -> dict[str, str]:
    (vodou_home / "config").mkdir(parents=True, exist_ok=True)
    (vodou_home / "config" / "settings.json").write_text(json.dumps({"bridge_port": free_port()}))
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "VODOU_EMBEDDER": "none"}


@pytest.fixture
def first(env: dict[str, str], vodou_home: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    log = tmp_path / "first.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "vodou_desktop", "-v"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: (vodou_home / "run" / "desktop.sock").exists(), "its single-instance socket", proc)
        yield proc, log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def launch_again(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vodou_desktop", *args], env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)


def test_second_launch_shows_the_first_and_exits(first: tuple[subprocess.Popen[str], Path],
                                                 env: dict[str, str]) -> None:
    proc, log = first
    assert SHOW_LOG not in log.read_text()
    second = launch_again(env)
    assert second.returncode == 0, second.stderr
    assert "already running" in second.stdout
    wait_for(lambda: SHOW_LOG in log.read_text(), "the show request in the first's log", proc)
    assert proc.poll() is None  # the first keeps running


def test_second_background_launch_exits_quietly(first: tuple[subprocess.Popen[str], Path],
                                                env: dict[str, str]) -> None:
    proc, log = first
    second = launch_again(env, "--background")
    assert second.returncode == 0, second.stderr
    assert second.stdout == ""
    # A show request, had one been sent, is logged before a later one: send a marker and wait for it.
    marker = launch_again(env)
    assert marker.returncode == 0
    wait_for(lambda: SHOW_LOG in log.read_text(), "the marker show request", proc)
    assert log.read_text().count(SHOW_LOG) == 1
