"""MCP-1 beside a running ``vodou serve``: the serve process owns the vault and writes to it through
the bridge while a ``vodou mcp`` process reads and writes the same file (SQLite WAL, one writer per
process). The wall, remember → search, and page text marked as data all hold; each side sees the
other's writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from tests.integration.mcp_stdio.harness import ROOT, McpClient
from tests.integration.mcp_stdio.test_mcp_server import _wall, ids, token
from tests.integration.tray.conftest import _wait
from vodou_desktop import paths

EXT = "abcdefghijklmnopabcdefghijklmnop"


def bridge(port: int, token_: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token_}", "Content-Type": "application/json",
                                          "X-Vodou-Client": "mcp-test"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_mcp_beside_serve_that_owns_and_writes_the_vault(vodou_home: Path) -> None:
    vault = vodou_home / "vault.sqlite"
    env = {**os.environ, "VODOU_HOME": str(vodou_home), "VODOU_EMBEDDER": "none", "PYTHONPATH": str(ROOT)}
    serve = subprocess.Popen([sys.executable, "-m", "vodou_desktop", "--vault", str(vault), "serve", "--port", "0"],
                             env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port_file = paths.runtime_dir() / "bridge.json"
        _wait(port_file.exists, 30, "vodou serve")
        port = json.loads(port_file.read_text())["port"]
        from vodou_desktop.bridge.tokens import TokenStore

        bearer = TokenStore().pair(EXT)
        with McpClient(vault, vodou_home) as client:
            _wall(client, vector=False)
            word = token()
            written = bridge(port, bearer, "/api/selection", {
                "url": "https://birds.example.org/heron", "title": "Herons", "text": f"Herons {word} wade slowly"})
            found = client.call("search_memory", {"query": f"herons {word}"})["results"]
            assert ids(found) == {written["id"]} and found[0]["page_data"] is True
            assert found[0]["provenance"]["site"] == "birds.example.org"
            mine = client.call("remember", {"text": f"The {word} pond freezes in January"})["memory"]
            seen = bridge(port, bearer, "/api/page-match/suggest",
                          {"url": "https://birds.example.org/", "prefix": word})
            assert mine["id"] in [f["id"] for f in seen["suggestions"]]  # serve sees what the MCP process wrote
    finally:
        serve.terminate()
        out, err = serve.communicate(timeout=30)
    assert serve.returncode == 0, err
