"""``python -m bench.rss``: does ``vodou serve`` keep its memory over many searches and probes?

Starts a real ``vodou serve`` (own temp home and vault, the bundled model) as a subprocess, fills
the vault with ``--facts`` memories through ``vodou remember``-like writes and lets the server's
own backfill embed them, pairs as the extension does (``/api/pair/start`` → the code printed on
the server's stdout → ``/api/pair/complete``), then sends ``page-match/match`` requests (each one a
hybrid search of the page's title and context, as the side panel asks) mixed with toolbar
``page-match/probe`` requests on ever new URLs. Prints the server's RSS (``/proc/<pid>/status``)
after the first search and after each ``--every`` searches, and the final ratio (target ≤ 1.2x).
Prints; never asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.corpus import chunks, queries

EXT_ID = "abcdefghijklmnopabcdefghijklmnop"
ORIGIN = f"chrome-extension://{EXT_ID}"
ROOT = Path(__file__).resolve().parents[1]
RSS_TARGET_MB = 300  # issue 22: a tray app or a server runs all day


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def rss_parts(pid: int) -> dict[str, float]:
    """RSS by kind (``/proc/<pid>/status``), MB: anonymous (the heap, the model's arena), file-backed
    (libraries, the vault's pages mapped by SQLite), shared memory."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile", "RssShmem"):
            out[key] = int(value.split()[0]) / 1024.0
    return out


def torch_loaded(pid: int) -> bool:
    """Whether torch's library is mapped into the process (it runs the model, or was imported)."""
    return "libtorch" in Path(f"/proc/{pid}/maps").read_text()


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


class Server:
    """A ``vodou serve`` subprocess whose stdout lines are read in a thread."""

    def __init__(self, home: Path, extra_env: dict[str, str]) -> None:
        env = {**os.environ, "VODOU_HOME": str(home), "PYTHONPATH": str(ROOT), **extra_env}
        self.proc = subprocess.Popen([sys.executable, "-m", "vodou_desktop", "serve", "--port", "0"], env=env,
                                     cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        line = self.wait_for(r"bridge on http://127\.0\.0\.1:(\d+)", 300)
        self.port = int(line)
        self.token = ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise SystemExit("vodou serve stopped") from None
                continue
            match = re.search(pattern, line)
            if match:
                return match.group(1)
        raise SystemExit(f"vodou serve never printed {pattern!r}")

    def request(self, method: str, path: str, body: Any = None, origin: str | None = None) -> Any:
        """One request; a 429 (the bridge's budget of POSTs per token) waits as told and retries."""
        while True:
            status, retry_after, data = self._send(method, path, body, origin)
            if status != 429:
                break
            time.sleep(float(retry_after or 1))
        if status >= 400:
            raise SystemExit(f"{method} {path}: {status} {data[:200]!r}")
        return json.loads(data) if data else None

    def _send(self, method: str, path: str, body: Any, origin: str | None) -> tuple[int, str | None, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Host": f"127.0.0.1:{self.port}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if origin:
            headers["Origin"] = origin
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers.update({"Content-Type": "application/json", "X-Vodou-Client": "extension"})
        conn.request(method, path, body=payload, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, resp.getheader("Retry-After"), data

    def pair(self) -> None:
        self.request("POST", "/api/pair/start", {"extensionId": EXT_ID}, origin=ORIGIN)
        code = self.wait_for(r"pairing code for extension \w+: (\w+)", 30)
        reply = self.request("POST", "/api/pair/complete", {"code": code}, origin=ORIGIN)
        self.token = str(reply["token"])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def fill_vault(home: Path, n: int) -> None:
    """``n`` memories through the real write path (in this process; the server embeds them)."""
    from vodou_desktop.ingest.remember import Origin, remember
    from vodou_desktop.vault import Vault

    os.environ["VODOU_HOME"] = str(home)
    from vodou_desktop import paths

    path = paths.vault_path(None)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    vault = Vault.open(path)
    try:
        for i, chunk in enumerate(chunks(n, seed=5)):
            url = f"https://example.org/page/{i % 500}"
            remember(vault, chunk.text, Origin(kind="capture", tier="capture", url=url, tool="bench"),
                     project=chunk.project)
    finally:
        vault.close()


def unembedded(home: Path) -> int:
    import apsw

    from vodou_desktop import paths

    os.environ["VODOU_HOME"] = str(home)
    conn = apsw.Connection(str(paths.vault_path(None)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        row = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()
        return int(row[0]) if row else 0
    finally:
        conn.close()


def run(facts: int, searches: int, probes_per_search: int, every: int, extra_env: dict[str, str]) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="vodou-rss-"))
    server = None
    try:
        fill_vault(home, facts)
        server = Server(home, extra_env)
        rss_at_start = rss_mb(server.proc.pid)  # the bridge answers; the model still loads in the background
        print(f"at start (bridge up, model loading): RSS {rss_at_start:7.1f} MB", flush=True)
        while unembedded(home):
            time.sleep(1)
        server.pair()
        pid = server.proc.pid
        rng = random.Random(3)
        texts = queries(max(searches, 200), seed=13)
        probe_n = 0
        points: list[tuple[int, float, int]] = []
        load = [os.getloadavg()[0]]
        for i in range(searches):
            page = rng.randrange(2_000)
            server.request("POST", "/api/page-match/match", {
                "url": f"https://example.org/page/{page}", "title": f"Page {page}",
                "pageContext": texts[i % len(texts)] + " " + " ".join(rng.sample(texts, 2))})
            for _ in range(probes_per_search):
                probe_n += 1
                server.request("GET", f"/api/page-match/probe?url=https%3A%2F%2Fsite{probe_n}.example%2Fp{probe_n}")
            if i == 0 or (i + 1) % every == 0:
                points.append((i + 1, rss_mb(pid), threads_of(pid)))
                print(f"after {i + 1:>5} searches ({probe_n:>6} probes): RSS {points[-1][1]:7.1f} MB,"
                      f" {points[-1][2]} threads", flush=True)
        load.append(os.getloadavg()[0])
        first, last = points[0][1], points[-1][1]
        parts = rss_parts(pid)
        print("at the end, by kind: " + ", ".join(f"{k} {v:.1f} MB" for k, v in parts.items()), flush=True)
        torch = torch_loaded(pid)
        return {"torch_loaded": torch,
                "facts": facts, "searches": searches, "probes": probe_n, "rss_at_start_mb": round(rss_at_start, 1),
                "rss_first_mb": round(first, 1),
                "rss_last_mb": round(last, 1), "ratio": round(last / first, 3),
                "rss_last_by_kind_mb": {k: round(v, 1) for k, v in parts.items()},
                "points": [{"searches": s, "rss_mb": round(r, 1), "threads": t} for s, r, t in points],
                "load_average_1min": [round(x, 2) for x in load], "env": extra_env}
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.rss", description=__doc__.split("\n")[0])
    p.add_argument("--facts", type=int, default=3_000, help="memories in the vault (embedded by the server)")
    p.add_argument("--searches", type=int, default=1_000)
    p.add_argument("--probes", type=int, default=2, help="toolbar probes (new URLs) per search")
    p.add_argument("--every", type=int, default=100, help="print RSS every this many searches")
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (experiments)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    extra = dict(item.split("=", 1) for item in args.env)
    print(f"# vodou serve RSS, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    result = run(args.facts, args.searches, args.probes, args.every, extra)
    print(f"RSS after the first search {result['rss_first_mb']:.0f} MB, after {result['searches']:,} searches"
          f" and {result['probes']:,} probes {result['rss_last_mb']:.0f} MB: ratio {result['ratio']:.2f}x"
          f" (target <= 1.2x); load average {result['load_average_1min'][0]} at start,"
          f" {result['load_average_1min'][1]} at end (2 cores, shared); torch loaded in the server:"
          f" {'yes' if result['torch_loaded'] else 'no'}")
    last, ratio = result["rss_last_mb"], result["ratio"]
    print(f"{'PASS' if last <= RSS_TARGET_MB else 'FAIL'}  RSS after {result['searches']:,} searches {last:.0f} MB"
          f" <= {RSS_TARGET_MB} MB")
    print(f"{'PASS' if ratio <= 1.2 else 'FAIL'}  flat: {ratio:.2f}x <= 1.2x")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
