"""MCP-1, JSON-RPC to the letter, over the raw pipes of a real ``vodou mcp``: every malformed message
gets its JSON-RPC error (parse error, invalid request, invalid params) and the next call works; the
end of stdin ends the process even while a search waits for the model; a cancelled call is honoured."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp_stdio.harness import ROOT, vodou_command

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw-test-client", "version": "1"}}}


class RawServer:
    def __init__(self, vault: Path, home: Path, embedder: str = "none") -> None:
        command, args = vodou_command()
        env = {**os.environ, "VODOU_HOME": str(home), "PYTHONPATH": str(ROOT), "VODOU_EMBEDDER": embedder,
               "HF_HUB_OFFLINE": "1"}
        self.stderr = open(home / "raw-stderr.log", "ab")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen([command, *args, "--vault", str(vault), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, cwd=home, env=env)
        self._buffer = b""

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def receive(self, deadline_s: float = 60.0) -> dict[str, Any]:
        """The next message from the server (a bounded wait: a missing answer fails, never hangs)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + deadline_s
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
            assert ready, "no answer from the server"
            chunk = os.read(fd, 65536)
            assert chunk, "the server closed its output"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def answer_to(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message

    def start(self) -> None:
        self.send(INIT)
        assert "result" in self.answer_to(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()
        self.stderr.close()


@pytest.fixture
def raw_server(tmp_path: Path) -> Iterator[RawServer]:
    server = RawServer(tmp_path / "vault.sqlite", tmp_path)
    server.start()
    yield server
    server.close()


def _call(server: RawServer, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                 "params": {"name": name, "arguments": arguments}})
    return server.answer_to(request_id)


def _deep(levels: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":' \
        + b"[" * levels + b"]" * levels + b"}}}"


# (line, expected code, expected id)
MALFORMED: list[tuple[str, bytes, int, Any]] = [
    ("truncated", b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_m', -32700, None),
    ("not json", b"hello there", -32700, None),
    ("not utf-8", b'{"jsonrpc":"2.0","id":6,"method":"ping","x":"\xed\xa0\x80\xff"}', -32700, None),
    ("surrogate in query", b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_memory",'
                           b'"arguments":{"query":"x\\ud800y"}}}', -32700, 7),
    ("surrogate in text", b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"remember",'
                          b'"arguments":{"text":"\\udfff"}}}', -32700, 8),
    ("surrogate in project", b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_memory",'
                             b'"arguments":{"query":"x","project":"\\ud83d"}}}', -32700, 9),
    ("batch", b'[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","id":11,"method":"ping"}]', -32600,
     None),
    ("number", b"42", -32600, None),
    ("null", b"null", -32600, None),
    ("no jsonrpc", b'{"id":12,"method":"ping"}', -32600, 12),
    ("bad id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    ("params not an object", b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":5}', -32600, 13),
    ("deep nesting", _deep(100_000), -32700, None),
    ("missing tool name", b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"arguments":{}}}', -32602, 14),
    ("unknown method", b'{"jsonrpc":"2.0","id":15,"method":"vodou/nothing"}', -32601, 15),
]


def test_every_malformed_message_gets_its_error_and_the_session_goes_on(raw_server: RawServer) -> None:
    for n, (name, line, code, rid) in enumerate(MALFORMED):
        raw_server.send(line)
        error = raw_server.receive()
        assert error.get("error", {}).get("code") == code, (name, error)
        assert error["id"] == rid and error["jsonrpc"] == "2.0", (name, error)
        answer = _call(raw_server, 1000 + n, "list_projects", {})
        assert answer["result"]["isError"] is False, name  # the next call works
    raw_server.send(b'{"jsonrpc":"2.0","method":"notifications/bogus","params":{"x":"\\ud800"}}')  # never answered
    assert _call(raw_server, 2000, "list_projects", {})["id"] == 2000


def _searching_with_a_stalled_model(tmp_path: Path) -> RawServer:
    """A started server whose model folder's first file never finishes reading, with search call 1
    sent (it waits for the model)."""
    model = tmp_path / "stalled-model"
    model.mkdir()
    os.mkfifo(model / "modules.json")
    os.mkfifo(model / "config.json")
    server = RawServer(tmp_path / "vault.sqlite", tmp_path, embedder=str(model))
    server.start()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "search_memory", "arguments": {"query": "anything"}}})
    return server


def test_end_of_input_while_a_search_waits_for_the_model_ends_the_process(tmp_path: Path) -> None:
    server = _searching_with_a_stalled_model(tmp_path)
    try:
        time.sleep(1.0)  # the call is now waiting for the model (it would wait 30 s)
        assert server.proc.poll() is None
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        server.proc.wait(timeout=10)  # generous: the process ends within a second or two here
        assert server.proc.returncode == 0
    finally:
        server.close()


def test_a_cancelled_call_stops_and_the_next_one_is_answered(tmp_path: Path) -> None:
    server = _searching_with_a_stalled_model(tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        answer = _call(server, 2, "list_projects", {})  # not stuck behind the cancelled search
        assert answer["result"]["isError"] is False
        server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert server.answer_to(3)["result"] == {}
    finally:
        server.close()
