"""DATA-6: nothing leaves the machine. Each of Vodou's processes runs under strace with the embedding
model on (the default): a CLI search by meaning, ``vodou serve``, ``vodou mcp`` (through the SDK's
client) and the tray app (offscreen). None may connect anywhere but 127.0.0.1/::1 or look a name
up, and, with HOME a fresh folder, nothing may appear under it but Vodou's own folders (ONNX
Runtime's telemetry wrote ``~/.cache/Microsoft/``). The environment they start with tries to turn
telemetry and the model hub back on, as a person's shell might: the package turns them off anyway.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.integration.packaging.nettrace import created_folders, network_violations, traced
from tests.integration.packaging.support import ROOT, require_tool

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]

HANG_GUARD_S = 300  # only stops a hung test (a model load on a busy machine); not a speed assertion
HERON = "The heron stands still in shallow water"
# What a person's shell may hold from other work; none of it may turn telemetry or downloads on.
HOSTILE_ENV = {"ORT_DISABLE_TELEMETRY": "0", "HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0",
               "HF_HUB_DISABLE_TELEMETRY": "0", "DO_NOT_TRACK": "0"}
CLEARED_PREFIXES = ("VODOU_", "XDG_", "HF_", "TRANSFORMERS_", "ORT_", "TORCHINDUCTOR_", "TLDEXTRACT_")
CLEARED = ("DO_NOT_TRACK", "DISABLE_TELEMETRY", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], object], what: str, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not predicate():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.2)


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (strace, then vodou, then its children)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return found


def traced_child(proc: subprocess.Popen[bytes]) -> int:
    """The pid of the command strace runs (signals go to it: strace does not pass them on)."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    wait_for(lambda: children.read_text().split(), "strace to start the command", proc)
    return int(children.read_text().split()[0])


def stop(proc: subprocess.Popen[bytes]) -> int:
    os.kill(traced_child(proc), signal.SIGTERM)
    return proc.wait(HANG_GUARD_S)


def maps_library(root: int, name: str) -> bool:
    for pid in descendants(root):
        try:
            if name in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            continue
    return False


def cpu_ticks(root: int) -> int:
    total = 0
    for pid in descendants(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def settle(root: int) -> None:
    """Until the process tree is nearly idle (under 0.1 s of CPU in a second): the model loaded, the
    query path checked and warmed, the vectors written. Only a wait, bounded by the hang guard;
    nothing is asserted about its length."""
    deadline = time.monotonic() + HANG_GUARD_S
    last = cpu_ticks(root)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = cpu_ticks(root)
        if now - last < os.sysconf("SC_CLK_TCK") // 10:
            return
        last = now


@dataclass
class World:
    """One fresh HOME shared by the four processes (the ONNX graph exported once), its logs."""

    root: Path
    env: dict[str, str]
    logs: list[Path] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return Path(self.env["HOME"])

    def log(self, name: str) -> Path:
        path = self.root / "traces" / f"{name}.strace"
        self.logs.append(path)
        return path

    def vodou(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "vodou_desktop", *args]

    def run(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(traced(self.vodou(*args), self.log(name)), env=self.env, cwd=self.root / "work",
                              capture_output=True, text=True, timeout=HANG_GUARD_S)
        assert proc.returncode == 0, proc.stderr
        return proc


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    require_tool("strace")
    root = tmp_path_factory.mktemp("offline")
    for name in ("home", "tmp", "run", "work", "traces"):
        (root / name).mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES) and k not in CLEARED}
    env.update(HOSTILE_ENV, HOME=str(root / "home"), TMPDIR=str(root / "tmp"), XDG_RUNTIME_DIR=str(root / "run"),
               PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen",
               VODOU_MODEL_WAIT="600")  # a first search waits for the model's one-off export (traced too)
    return World(root, env)


def vodou_folders(world: World) -> list[Path]:
    """Where Vodou keeps its files under this HOME, as the package itself says."""
    out = subprocess.run([sys.executable, "-c", "from vodou_desktop import paths; print(paths.data_dir()); "
                          "print(paths.config_dir()); print(paths.cache_dir()); print(paths.log_dir())"],
                         env=world.env, capture_output=True, text=True, check=True).stdout.split()
    return [Path(p) for p in out]


def strays(home: Path, allowed: list[Path]) -> list[str]:
    """Whatever exists under ``home`` that is neither inside one of ``allowed`` nor a parent of one."""
    bad = []
    for path in sorted(home.rglob("*")):
        inside = any(path == a or a in path.parents for a in allowed)
        parent = any(path in a.parents for a in allowed)
        if not (inside or parent):
            bad.append(str(path.relative_to(home)))
    return bad


def check_trace(world: World, log: Path) -> None:
    lines = log.read_text(errors="replace").splitlines()
    assert network_violations(lines) == [], f"{log.stem}: left the machine"
    outside = [str(p) for p in created_folders(lines) if world.root not in p.parents]
    assert outside == [], f"{log.stem}: made folders outside HOME and TMPDIR"


def test_cli_search_by_meaning_stays_on_the_machine(world: World) -> None:
    world.run("cli-add", "mem", "add", HERON)
    world.run("cli-add-2", "mem", "add", "Quarterly report is due on the fifth")
    found = world.run("cli-search", "mem", "search", "wading bird fishing", "--json")
    hits = json.loads(found.stdout)
    hits = hits.get("results", hits) if isinstance(hits, dict) else hits
    assert hits and hits[0]["text"] == HERON, (hits, found.stderr)  # only the model can find it
    for name in ("cli-add", "cli-add-2", "cli-search"):
        check_trace(world, world.root / "traces" / f"{name}.strace")


def _ping(port: int) -> dict[str, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/ping", headers={"Host": f"127.0.0.1:{port}"})
    body = json.loads(conn.getresponse().read())
    conn.close()
    return body  # type: ignore[no-any-return]


@pytest.fixture
def stop_at_end() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_stays_on_the_machine(world: World, stop_at_end: list[subprocess.Popen[bytes]]) -> None:
    log = world.log("serve")
    out = world.root / "serve.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(traced(world.vodou("-v", "serve", "--port", "0"), log), env=world.env,
                                cwd=world.root / "work", stdout=sink, stderr=subprocess.STDOUT)
    stop_at_end.append(proc)
    wait_for(lambda: "bridge on http://127.0.0.1:" in out.read_text(errors="replace"), "the bridge", proc)
    port = int(out.read_text().split("bridge on http://127.0.0.1:")[1].split()[0])
    assert _ping(port)["app"] == "vodou-desktop"
    # A long-running process embeds queries through ONNX Runtime, the library that phoned home.
    wait_for(lambda: maps_library(proc.pid, "onnxruntime"), "ONNX Runtime to load", proc)
    settle(proc.pid)
    assert stop(proc) == 0, out.read_text()
    check_trace(world, log)


def test_mcp_server_stays_on_the_machine(world: World) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    log = world.log("mcp")
    cmd = traced(world.vodou("mcp"), log)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=world.env, cwd=str(world.root / "work"))

    async def session() -> list[str]:
        with (world.root / "mcp.err").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                deadline = time.monotonic() + HANG_GUARD_S
                while True:  # keyword results until the model is ready; the heron only by meaning
                    result = await client.call_tool("search_memory", {"query": "wading bird fishing"})
                    texts = [c.text for c in result.content if isinstance(getattr(c, "text", None), str)]
                    if any(HERON in t for t in texts) or time.monotonic() > deadline:
                        return texts
                    await anyio.sleep(0.5)

    texts = anyio.run(session)
    assert any(HERON in t for t in texts), (texts, (world.root / "mcp.err").read_text()[-2000:])
    check_trace(world, log)


def test_tray_app_stays_on_the_machine(world: World, stop_at_end: list[subprocess.Popen[bytes]]) -> None:
    config = world.root / "home" / ".config" / "vodou-desktop"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"bridge_port": free_port()}))
    log = world.log("tray")
    out = world.root / "tray.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(traced(world.vodou("-v"), log), env=world.env, cwd=world.root / "work",
                                stdout=sink, stderr=subprocess.STDOUT)
    stop_at_end.append(proc)
    wait_for(lambda: "browser bridge listening" in out.read_text(errors="replace").lower(), "the bridge", proc)
    wait_for(lambda: maps_library(proc.pid, "onnxruntime"), "ONNX Runtime to load", proc)
    settle(proc.pid)
    assert stop(proc) == 0, out.read_text()[-4000:]
    check_trace(world, log)


def test_home_holds_only_vodous_folders(world: World) -> None:
    """After every process above ran: nothing but Vodou's folders under HOME (ONNX Runtime's
    ~/.cache/Microsoft/ among what must not be there)."""
    if len(world.logs) < 5:
        pytest.skip("needs the four processes above in the same run")
    allowed = vodou_folders(world)
    assert all(world.home in a.parents for a in allowed), allowed
    assert not (world.home / ".cache" / "Microsoft").exists()
    assert strays(world.home, allowed) == []
    assert (allowed[0] / "default.vodou.sqlite").is_file()  # the runs above did use this HOME


def test_the_trace_sees_a_lookup_and_a_connection(tmp_path: Path) -> None:
    """The check above can fail: a name lookup and a connection to a documentation address are seen."""
    require_tool("strace")
    log = tmp_path / "probe.strace"
    code = ("import socket\n"
            "try:\n socket.getaddrinfo('vodou-test.invalid', 443)\nexcept OSError:\n pass\n"
            "s = socket.socket(); s.setblocking(False)\n"
            "try:\n s.connect(('192.0.2.1', 9))\nexcept OSError:\n pass\n")
    subprocess.run(traced([sys.executable, "-c", code], log), check=True, timeout=60)
    bad = network_violations(log.read_text().splitlines())
    assert any("192.0.2.1" in line for line in bad), bad
    resolv = Path("/etc/resolv.conf")
    if resolv.is_file() and "nameserver" in resolv.read_text():
        assert any("htons(53)" in line for line in bad), bad


def test_onnx_runtime_without_the_package_writes_under_home(tmp_path: Path) -> None:
    """Why the switch matters: imported on its own, with a fresh HOME, ONNX Runtime makes
    ~/.cache/Microsoft/; imported after ``vodou_desktop``, even with the switch set to 0, it does not."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_PREFIXES) and k not in CLEARED}
    bare, ours = tmp_path / "bare", tmp_path / "ours"
    for home in (bare, ours):
        home.mkdir()
    subprocess.run([sys.executable, "-c", "import onnxruntime"], env={**env, "HOME": str(bare)}, check=True,
                   timeout=120)
    subprocess.run([sys.executable, "-c", "import vodou_desktop, onnxruntime"], timeout=120, check=True,
                   env={**env, "HOME": str(ours), "PYTHONPATH": str(ROOT), "ORT_DISABLE_TELEMETRY": "0"})
    assert list(ours.rglob("*")) == []
    if not (bare / ".cache" / "Microsoft").is_dir():
        pytest.skip("this ONNX Runtime writes no telemetry folder of its own: the control shows nothing")
