"""Reading ChatGPT and Claude data exports into plain conversations (no vault access here).

ChatGPT's ``conversations.json`` is a list of conversations, each a ``mapping`` tree of nodes
whose ``message`` has ``author.role``, ``content.parts`` and an epoch ``create_time``; the branch
shown to the person is the path from ``current_node`` back to the root (edited-away branches are
skipped). Claude's ``conversations.json`` is a list with ``chat_messages`` (``sender``, ``text``
or ``content`` blocks, ISO ``created_at``).

Every conversation is validated completely before anything is stored: a malformed one raises
``MalformedConversation`` naming the problem, and the importer reports it and stores nothing
from it. File-level problems (missing, huge, truncated, not JSON) raise ``InvalidInput``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vodou_desktop.errors import InvalidInput
from vodou_desktop.vault.clock import parse_iso, to_iso

MAX_EXPORT_BYTES = 2 * 1024**3
FORMATS = ("chatgpt", "claude")


class MalformedConversation(ValueError):
    """One conversation of an export cannot be read; the rest of the file can."""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def text_only(value: str) -> str:
    """JSON can spell half of a UTF-16 pair alone (``\\ud83d``): that is not text and SQLite cannot
    store it, so it becomes U+FFFD (the rest of the message is kept)."""
    return _LONE_SURROGATE.sub("\ufffd", value)


@dataclass(frozen=True)
class Message:
    id: str
    role: str  # "user" or "assistant"
    text: str
    at: str | None  # ISO 8601 UTC: when the message was written

    def __post_init__(self) -> None:  # every string an export gives is text before it goes further
        object.__setattr__(self, "id", text_only(self.id))
        object.__setattr__(self, "text", text_only(self.text))


@dataclass(frozen=True)
class Conversation:
    id: str
    title: str | None
    messages: tuple[Message, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", text_only(self.id))
        object.__setattr__(self, "title", None if self.title is None else text_only(self.title))


def load_export(path: Path, max_bytes: int = MAX_EXPORT_BYTES) -> list[Any]:
    """The top-level list of an export file, or a clear error naming what is wrong with it."""
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {path}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder; give the conversations.json file inside the export")
    if size > max_bytes:
        raise InvalidInput(f"{path} is too large to import ({size} bytes; the limit is {max_bytes})")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text (byte {exc.start}); is it the export's JSON file?") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) - 1:
            raise InvalidInput(f"{path} is truncated: the JSON ends unexpectedly at line {exc.lineno}") from exc
        raise InvalidInput(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(data, list):
        raise InvalidInput(f"{path} is not a conversations export: expected a JSON list of conversations")
    return data


def _epoch(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedConversation(f"{where}: create_time is not a number")
    try:
        return to_iso(datetime.fromtimestamp(float(value), UTC))
    except (OverflowError, OSError, ValueError) as exc:
        raise MalformedConversation(f"{where}: create_time {value!r} is out of range") from exc


def _iso(value: Any, where: str) -> str | None:
    if value is None:
        return None
    try:
        return to_iso(parse_iso(str(value).replace("Z", "+00:00")))
    except ValueError as exc:
        raise MalformedConversation(f"{where}: created_at {value!r} is not a date") from exc


def _require(cond: bool, why: str) -> None:
    if not cond:
        raise MalformedConversation(why)


def chatgpt_conversation(raw: Any, index: int) -> Conversation:
    _require(isinstance(raw, dict), f"conversation {index} is not an object")
    cid = str(raw.get("conversation_id") or raw.get("id") or f"#{index}")
    mapping = raw.get("mapping")
    _require(isinstance(mapping, dict), f"conversation {cid}: 'mapping' is missing or not an object")
    messages = [m for node in _chatgpt_branch(mapping, raw.get("current_node"), cid)
                if (m := _chatgpt_message(node, cid)) is not None]
    fallback = _epoch(raw.get("create_time"), f"conversation {cid}")
    return Conversation(cid, raw.get("title") if isinstance(raw.get("title"), str) else None,
                        tuple(Message(m.id, m.role, m.text, m.at or fallback) for m in messages))


def _chatgpt_branch(mapping: dict[str, Any], current: Any, cid: str) -> list[Any]:
    for key, node in mapping.items():
        _require(isinstance(node, dict), f"conversation {cid}: node {key} is not an object")
    if isinstance(current, str) and current in mapping:
        path, seen = [], set()
        node_id: Any = current
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            path.append(mapping[node_id])
            node_id = mapping[node_id].get("parent")
        return list(reversed(path))
    nodes = list(mapping.values())
    return sorted(nodes, key=lambda n: (n.get("message") or {}).get("create_time") or 0)


def _chatgpt_message(node: dict[str, Any], cid: str) -> Message | None:
    msg = node.get("message")
    if msg is None:
        return None
    where = f"conversation {cid}, message {node.get('id')}"
    _require(isinstance(msg, dict), f"{where}: 'message' is not an object")
    author = msg.get("author")
    _require(isinstance(author, dict), f"{where}: 'author' is missing")
    content = msg.get("content")
    _require(isinstance(content, dict), f"{where}: 'content' is missing")
    parts = content.get("parts", [])
    _require(isinstance(parts, list), f"{where}: 'content.parts' is not a list")
    text = "\n".join(p for p in parts if isinstance(p, str)).strip()
    role = author.get("role")
    if role not in ("user", "assistant") or not text:
        return None
    return Message(str(msg.get("id") or node.get("id")), role, text, _epoch(msg.get("create_time"), where))


def claude_conversation(raw: Any, index: int) -> Conversation:
    _require(isinstance(raw, dict), f"conversation {index} is not an object")
    cid = str(raw.get("uuid") or f"#{index}")
    chat = raw.get("chat_messages")
    _require(isinstance(chat, list), f"conversation {cid}: 'chat_messages' is missing or not a list")
    messages: list[Message] = []
    for i, msg in enumerate(chat):
        where = f"conversation {cid}, message {i}"
        _require(isinstance(msg, dict), f"{where} is not an object")
        role = {"human": "user", "assistant": "assistant"}.get(msg.get("sender"))
        text = _claude_text(msg, where)
        if role and text:
            at = _iso(msg.get("created_at"), where) or _iso(raw.get("created_at"), f"conversation {cid}")
            messages.append(Message(str(msg.get("uuid") or i), role, text, at))
    return Conversation(cid, raw.get("name") if isinstance(raw.get("name"), str) else None, tuple(messages))


def _claude_text(msg: dict[str, Any], where: str) -> str:
    text = msg.get("text")
    if isinstance(text, str) and text.strip():
        return text.strip()
    blocks = msg.get("content", [])
    _require(isinstance(blocks, list), f"{where}: 'content' is not a list")
    return "\n".join(b["text"] for b in blocks
                     if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)).strip()


def guess_format(data: list[Any]) -> str | None:
    """Which export this looks like, from its first conversation (None when it is unclear)."""
    first = next((c for c in data if isinstance(c, dict)), None)
    if first is None:
        return None
    if "mapping" in first:
        return "chatgpt"
    if "chat_messages" in first:
        return "claude"
    return None


def check_format(data: list[Any], fmt: str, path: Any) -> None:
    """A file of the other format is refused before any write, naming the importer to use."""
    guessed = guess_format(data)
    if guessed is not None and guessed != fmt:
        raise InvalidInput(f"{path} looks like a {guessed} export, not {fmt}: run `vodou import {guessed} {path}`")


def conversations(data: list[Any], fmt: str) -> Iterator[Conversation | MalformedConversation]:
    """Each conversation of the export, or the error that makes it unreadable."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    read = chatgpt_conversation if fmt == "chatgpt" else claude_conversation
    for index, raw in enumerate(data):
        try:
            yield read(raw, index)
        except MalformedConversation as exc:
            yield exc
