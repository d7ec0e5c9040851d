"""The stdio transport's line check in-process: what reaches the SDK, what is answered at once (and
with which JSON-RPC code and id), what is dropped (a malformed notification)."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from vodou_desktop.mcp.transport import Reply, check_line


@pytest.mark.parametrize(("line", "code", "rid"), [
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', -32700, None),
    (b"\xff\xfe", -32700, None),
    (b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"q":"\\udc00"}}', -32700, "a"),
    (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', -32700, None),
    (b"[1,2]", -32600, None),
    (b'"text"', -32600, None),
    (b'{"jsonrpc":"1.0","id":2,"method":"ping"}', -32600, 2),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    (b"[" * 50_000 + b"]" * 50_000, -32700, None),
])
def test_malformed_lines_are_answered(line: bytes, code: int, rid: object) -> None:
    out = check_line(line)
    assert isinstance(out, Reply)
    error = out.message.message
    assert isinstance(error, types.JSONRPCError) and error.error.code == code and error.id == rid


def test_good_messages_pass_and_malformed_notifications_are_dropped() -> None:
    for line in (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n',
                 b'{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}',
                 b'{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no"}}',
                 b'{"jsonrpc":"2.0","method":"notifications/initialized"}'):
        assert isinstance(check_line(line), SessionMessage), line
    assert check_line(b"   \n") is None
    assert check_line(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}') is None
    assert check_line(b'{"method":"notifications/x"}') is None
