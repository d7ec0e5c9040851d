"""Sync through a real Syncthing: two instances on 127.0.0.1 with their own homes (discovery, relays, NAT,
usage reports and upgrades off), one shared folder, two vaults. A memory added on A is found by
`vodou mem search` on B; an erase on B leaves no canary on A or in either folder copy. Every wait is a
bounded loop (a rescan is asked through Syncthing's REST API after each Vodou run)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.sync import sealing
from vodou_desktop.sync.folder import SyncFolder

pytestmark = [pytest.mark.sync_engine,
              pytest.mark.skipif(shutil.which("syncthing") is None, reason="needs syncthing (.ci/system-deps.sh)")]
FOLDER_ID = "vodou-test"
CANARY = "CANARY-5e1d heron nest under the old bridge"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(check: Callable[[], bool], limit: float = 90.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return check()


class Instance:
    def __init__(self, home: Path, folder: Path) -> None:
        self.home, self.folder = home, folder
        out = subprocess.run(["syncthing", "generate", "--home", str(home), "--no-default-folder"],
                             capture_output=True, text=True, timeout=60, check=True)
        found = re.search(r"Device ID: ([A-Z0-9-]+)", out.stdout + out.stderr)
        assert found, out.stdout + out.stderr
        self.device_id = found.group(1)
        self.port, self.gui = _free_port(), _free_port()
        self.api_key = "vodou-test-" + os.urandom(8).hex()
        self.proc: subprocess.Popen[bytes] | None = None

    def configure(self, peer: Instance) -> None:
        (self.folder / ".stfolder").mkdir(parents=True, exist_ok=True)
        devices = "".join(f'<device id="{d.device_id}" name="{d.home.name}" compression="metadata">'
                          f"<address>tcp://127.0.0.1:{d.port}</address></device>" for d in (self, peer))
        (self.home / "config.xml").write_text(f"""<configuration version="36">
  <folder id="{FOLDER_ID}" label="vodou" path="{self.folder}" type="sendreceive" rescanIntervalS="3600"
          fsWatcherEnabled="true" fsWatcherDelayS="1">
    <device id="{self.device_id}"></device><device id="{peer.device_id}"></device>
  </folder>
  {devices}
  <gui enabled="true" tls="false"><address>127.0.0.1:{self.gui}</address><apikey>{self.api_key}</apikey></gui>
  <options>
    <listenAddress>tcp://127.0.0.1:{self.port}</listenAddress>
    <globalAnnounceEnabled>false</globalAnnounceEnabled>
    <localAnnounceEnabled>false</localAnnounceEnabled>
    <relaysEnabled>false</relaysEnabled>
    <natEnabled>false</natEnabled>
    <startBrowser>false</startBrowser>
    <urAccepted>-1</urAccepted>
    <crashReportingEnabled>false</crashReportingEnabled>
    <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
    <reconnectionIntervalS>1</reconnectionIntervalS>
    <stunKeepaliveStartS>0</stunKeepaliveStartS>
  </options>
</configuration>
""")

    def start(self) -> None:
        env = {**os.environ, "STNOUPGRADE": "1", "STNORESTART": "1", "STNODEFAULTFOLDER": "1"}
        self.proc = subprocess.Popen(["syncthing", "serve", "--home", str(self.home), "--no-browser",
                                      "--no-restart", "--no-upgrade", "--logfile", str(self.home / "log.txt")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    def rest(self, method: str, path: str) -> object:
        req = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", method=method,
                                     headers={"X-API-Key": self.api_key})
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - 127.0.0.1, our own instance
            body = resp.read()
        return json.loads(body) if body.strip() else None

    def ready(self) -> bool:
        try:
            return self.rest("GET", "/rest/system/ping") == {"ping": "pong"}
        except OSError:
            return False

    def scan(self) -> None:
        self.rest("POST", f"/rest/db/scan?folder={FOLDER_ID}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[tuple[Instance, Instance]]:
    a = Instance(tmp_path / "st-a", tmp_path / "folder-a")
    b = Instance(tmp_path / "st-b", tmp_path / "folder-b")
    a.configure(b)
    b.configure(a)
    a.start()
    b.start()
    try:
        assert until(lambda: a.ready() and b.ready()), "syncthing did not start"
        yield a, b
    finally:
        a.stop()
        b.stop()


def _files(folder: Path) -> dict[str, bytes]:
    base = folder / "vodou"
    return {str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*") if p.is_file()} if base.exists() else {}


def _in_step(a: Instance, b: Instance) -> bool:
    return _files(a.folder) == _files(b.folder) and bool(_files(a.folder))


def _plaintexts(folder: Path, secret: bytes) -> list[str]:
    keys = sealing.FolderKeys.from_secret(secret)
    out = []
    sync = SyncFolder(folder)
    for device in sync.entries():
        for seq, path in sync.change_files(device).items():
            out.append(json.dumps(sealing.unseal(keys, "c", device, seq, path.read_bytes())))
        for kind, path in (("s", sync.snapshot_file(device)), ("d", sync.device_file(device))):
            if path.exists():
                out.append(json.dumps(sealing.unseal(keys, kind, device, 0, path.read_bytes())))
    return out


def test_a_memory_travels_through_syncthing_and_an_erase_leaves_no_canary(
        engines: tuple[Instance, Instance], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    a, b = engines
    va, vb = ["--vault", str(tmp_path / "a.sqlite")], ["--vault", str(tmp_path / "b.sqlite")]
    key_file = tmp_path / "join-key.txt"
    assert run_cli(*va, "mem", "add", "an ordinary first memory").code == 0
    assert run_cli(*va, "sync", "setup", str(a.folder), "--name", "a", "--key-file", str(key_file)).code == 0
    secret = sealing.parse_sync_key(key_file.read_text().splitlines()[-1])
    assert secret is not None
    a.scan()
    assert until(lambda: _in_step(a, b)), "the first device's files did not reach the second folder"
    joined = run_cli(*vb, "sync", "join", str(b.folder), "--name", "b", "--key-file", str(key_file))
    assert joined.code == 0, joined.err

    assert run_cli(*va, "mem", "add", CANARY).code == 0
    assert run_cli(*va, "sync", "now").code == 0
    a.scan()
    b.scan()
    assert until(lambda: _in_step(a, b))
    assert run_cli(*vb, "sync", "now").code == 0
    found = json.loads(run_cli(*vb, "mem", "search", "heron bridge", "--json").out)
    memory = next(r for r in found["results"] if r["text"] == CANARY)

    erased = run_cli(*vb, "mem", "erase", str(memory["id"]), "--yes")
    assert erased.code == 0, erased.err
    assert run_cli(*vb, "sync", "now").code == 0
    b.scan()
    assert until(lambda: _in_step(a, b))
    assert run_cli(*va, "sync", "now").code == 0  # A applies the erase and rewrites its own files
    a.scan()
    assert until(lambda: _in_step(a, b) and not any("CANARY-5e1d" in t for t in _plaintexts(b.folder, secret)))
    assert run_cli(*va, "sync", "now").code == 0
    for vault in (tmp_path / "a.sqlite", tmp_path / "b.sqlite"):
        data = b"".join(p.read_bytes() for p in tmp_path.glob(vault.name + "*") if p.is_file())
        assert b"CANARY-5e1d" not in data, vault.name
    for folder in (a.folder, b.folder):
        assert not any("CANARY-5e1d" in t for t in _plaintexts(folder, secret)), folder.name
        assert not (folder / ".stversions").exists()
    assert "an ordinary first memory" in run_cli(*vb, "mem", "search", "ordinary", "--json").out


def _sync_both(a: Instance, b: Instance, va: list[str], vb: list[str]) -> None:
    """Each vault runs, Syncthing carries the files both ways, each runs again (to apply what arrived)."""
    for _ in range(2):
        for vault, engine in ((va, a), (vb, b)):
            done = run_cli(*vault, "sync", "now")
            assert done.code == 0, done.err
            engine.scan()
        assert until(lambda: _in_step(a, b)), "the folders did not come in step"


def test_a_restore_then_an_erase_through_syncthing(engines: tuple[Instance, Instance], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A backs up, adds, syncs, restores the backup and erases a memory: the erase reaches B (its vault, its
    backups, both folder copies); what A made between the backup and the restore stays; nothing is refused."""
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    a, b = engines
    va, vb = ["--vault", str(tmp_path / "a.sqlite")], ["--vault", str(tmp_path / "b.sqlite")]
    key_file = tmp_path / "join-key.txt"
    assert run_cli(*va, "mem", "add", CANARY).code == 0
    assert run_cli(*va, "sync", "setup", str(a.folder), "--name", "a", "--key-file", str(key_file)).code == 0
    secret = sealing.parse_sync_key(key_file.read_text().splitlines()[-1])
    assert secret is not None
    a.scan()
    assert until(lambda: _in_step(a, b))
    assert run_cli(*vb, "sync", "join", str(b.folder), "--name", "b", "--key-file", str(key_file)).code == 0
    _sync_both(a, b, va, vb)
    backup = tmp_path / "a-backup.sqlite"
    assert run_cli(*va, "backup", str(backup)).code == 0
    assert run_cli(*vb, "backup").code == 0  # into B's backups folder: the erase must reach it too
    assert run_cli(*va, "mem", "add", "made on A after its backup").code == 0
    _sync_both(a, b, va, vb)
    restored = run_cli(*va, "restore", str(backup))
    assert restored.code == 0, restored.err
    listed = json.loads(run_cli(*va, "mem", "list", "--json").out)
    memory = next(m for m in (listed if isinstance(listed, list) else listed["memories"]) if m["text"] == CANARY)
    assert run_cli(*va, "mem", "erase", str(memory["id"]), "--yes").code == 0
    _sync_both(a, b, va, vb)
    _sync_both(a, b, va, vb)  # every computer rewrote its own files without it, and carried them
    for vault in (va, vb):
        assert CANARY not in run_cli(*vault, "mem", "list", "--json").out
        assert "made on A after its backup" in run_cli(*vault, "mem", "list", "--json").out
        status = json.loads(run_cli(*vault, "sync", "status", "--json").out)
        assert status["problems"] == [], status["problems"]
    for path in [*tmp_path.glob("b.sqlite*"), *tmp_path.glob("a.sqlite*"),
                 *(Path(os.environ["VODOU_HOME"]) / "data" / "backups").glob("b.sqlite*")]:
        if path.is_file():
            assert b"CANARY-5e1d" not in path.read_bytes(), path.name
    for folder in (a.folder, b.folder):
        assert not any("CANARY-5e1d" in t for t in _plaintexts(folder, secret)), folder.name
