"""The stdio transport: each line is checked before the SDK sees it, so every malformed message gets
its JSON-RPC error and the session goes on.

The SDK's own stdio transport hands a line it cannot parse to the session as an exception, which the
session only logs: the client gets no answer and waits for its own timeout. Here a reader thread
decodes and parses each line itself and answers what is wrong at once:

- not UTF-8, not JSON (truncated), nested too deeply to parse, or text with a lone surrogate
  (``"\\ud800"``: valid JSON escapes that are no Unicode text): ``-32700`` parse error;
- a JSON batch, a JSON value that is not an object, or an object that is no JSON-RPC message:
  ``-32600`` invalid request;
- the id of the request when it can be read, else ``null`` (JSON-RPC 2.0); a malformed
  notification (no id) is logged, never answered.

Everything else goes to the SDK unchanged (it answers ``-32601`` for an unknown method and
``-32602`` for invalid params). The reader is a daemon thread, so at end of input the session closes
at once, whatever a call is doing. Like the SDK's transport, the process's own stdin and stdout are
pointed at the null device and stderr while serving, so a stray print cannot corrupt the wire.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)
MAX_LINE_BYTES = 16 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


@dataclass(frozen=True)
class Reply:
    """An error the transport answers itself (the SDK never sees the line)."""

    message: SessionMessage


def _error(request_id: Any, code: int, message: str) -> Reply:
    return Reply(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id,
                                                   error=types.ErrorData(code=code, message=message))))


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= ch <= "\udfff" for ch in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _request_id(obj: dict[str, Any]) -> Any:
    """The message's id when it is a usable JSON-RPC id, else None (answered as ``null``)."""
    rid = obj.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    if isinstance(rid, str) and _has_lone_surrogate(rid):
        return None
    return rid


def check_line(line: bytes) -> SessionMessage | Reply | None:
    """What one line of input becomes: the message for the SDK, an error to answer, or nothing
    (a blank line, or a malformed notification, which JSON-RPC never answers)."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: the message is not UTF-8 (byte {exc.start})")
    try:
        obj = json.loads(text)
    except RecursionError:
        return _error(None, PARSE_ERROR, "Parse error: the message is nested too deeply")
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: {str(exc)[:120]}")
    if isinstance(obj, list):
        return _error(None, INVALID_REQUEST, "Invalid Request: MCP does not take JSON-RPC batches;"
                                             " send one message per line")
    if not isinstance(obj, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    rid = _request_id(obj)
    notification = "id" not in obj and "method" in obj
    if _has_lone_surrogate(obj):
        if notification:
            log.info("dropped a notification holding a lone surrogate")
            return None
        return _error(rid, PARSE_ERROR, "Parse error: the message holds a lone surrogate (\\ud800-\\udfff),"
                                        " which is not Unicode text")
    if "id" in obj and rid is None and "method" in obj:
        return _error(None, INVALID_REQUEST, "Invalid Request: a request id must be a string or a number")
    try:
        message = types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
    except (ValueError, RecursionError):
        if notification:
            log.info("dropped a malformed notification")
            return None
        return _error(rid, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
                                            " (jsonrpc \"2.0\", a method name and an id of string or number)")
    return SessionMessage(message)


def _lines(source: BinaryIO) -> Iterator[bytes]:
    """Lines of input; a line longer than ``MAX_LINE_BYTES`` comes as one ``b"\\0"`` marker."""
    while True:
        line = source.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := source.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield b"\0"
            continue
        yield line


def _read(source: BinaryIO, inbox: MemoryObjectSendStream[SessionMessage | Exception],
          outbox: MemoryObjectSendStream[SessionMessage], token: Any) -> None:
    """The reader thread: check each line, pass messages in, answer errors; close both at the end."""
    try:
        for line in _lines(source):
            item = _error(None, INVALID_REQUEST, "Invalid Request: message too large") if line == b"\0" \
                else check_line(line)
            if isinstance(item, Reply):
                anyio.from_thread.run(outbox.send, item.message, token=token)
            elif item is not None:
                anyio.from_thread.run(inbox.send, item, token=token)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError, OSError) as exc:
        log.debug("stdin reader stopped: %s", exc)
    finally:
        for stream in (inbox, outbox):
            with suppress(RuntimeError):
                anyio.from_thread.run_sync(stream.close, token=token)


@contextmanager
def _claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The wire on private descriptors; fd 0 reads the null device and fd 1 writes to stderr meanwhile."""
    saved_in, saved_out = os.dup(0), os.dup(1)
    source, sink = os.fdopen(os.dup(saved_in), "rb"), os.fdopen(os.dup(saved_out), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        yield source, sink
    finally:  # the reader thread may still block on ``source``: it is left to the process's exit
        with suppress(OSError, ValueError):
            sink.flush()
        for fd, saved in ((0, saved_in), (1, saved_out)):
            with suppress(OSError):
                os.dup2(saved, fd)
                os.close(saved)


@asynccontextmanager
async def checked_stdio(source: BinaryIO | None = None, sink: BinaryIO | None = None
                        ) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                                                 MemoryObjectSendStream[SessionMessage]]]:
    """``(read_stream, write_stream)`` for ``Server.run`` over stdin/stdout (or the given streams)."""
    if source is None or sink is None:
        with _claimed_stdio() as (stdin, stdout):
            async with checked_stdio(stdin, stdout) as streams:
                yield streams
        return
    inbox_send, inbox = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    outbox, outbox_receive = anyio.create_memory_object_stream[SessionMessage](16)
    token = anyio.lowlevel.current_token()
    reader = threading.Thread(target=_read, args=(source, inbox_send, outbox.clone(), token),
                              name="vodou-mcp-stdin", daemon=True)

    drained = anyio.Event()

    async def write() -> None:
        try:
            async with outbox_receive:
                async for message in outbox_receive:
                    line = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await anyio.to_thread.run_sync(_write, sink, line.encode("utf-8"), abandon_on_cancel=True)
        except OSError:
            log.info("the client stopped reading")
        finally:
            drained.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(write)
        reader.start()
        try:
            async with outbox:
                yield inbox, outbox
        finally:
            with anyio.move_on_after(0.5):  # the last answers go out before the wire closes
                await drained.wait()
            tg.cancel_scope.cancel()


def _write(sink: BinaryIO, data: bytes) -> None:
    sink.write(data)
    sink.flush()
