"""`vodou serve` as a real process: it binds, writes its port file, answers, and stops cleanly on signals."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def ping(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/api/ping", headers={"Host": f"127.0.0.1:{port}"})
    status = conn.getresponse().status
    conn.close()
    return status


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_headless_and_stops_on_signal(vodou_home: Path, sig: signal.Signals) -> None:
    env = {**os.environ, "VODOU_HOME": str(vodou_home), "VODOU_EMBEDDER": "none", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "vodou_desktop", "serve", "--port", "0"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "bridge on http://127.0.0.1:" in line, line + proc.stderr.read() if proc.stderr else line
        port_file = vodou_home / "run" / "bridge.json"
        port = json.loads(port_file.read_text())["port"]
        assert oct(port_file.stat().st_mode & 0o777) == "0o600"
        assert ping(port) == 200
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "bridge stopped, vault closed" in out
    assert not port_file.exists()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            ping(port)
        except OSError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the port still answers after the server stopped")
