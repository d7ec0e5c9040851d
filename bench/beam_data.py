"""BEAM 100K, read at benchmark time, and turned into a real ChatGPT ``conversations.json``.

BEAM (Tavakoli et al. 2025, CC BY-SA 4.0 per its authors' card) is 20 machine-generated chats between
a person and an AI assistant, with probing questions that name their evidence messages by id. It is
not ours to ship: it is read from ``../shared/data/beam/100K`` beside the checkout (or ``VODOU_BEAM``)
and never copied into the repository, a wheel or a fixture. When it is not there, ``load`` raises
``Missing`` with a sentence saying so and the benchmarks skip it.

Normalisation (the data's own README): the generation marker `` ->-> b,n`` is cut from every message;
a question's gold is its evidence ids flattened and de-duplicated (for a knowledge update only
``updated_info``); questions without gold (abstention, and a few empty lists) are not scored.

The export is what ChatGPT writes: one conversation per dated batch, a ``mapping`` tree with a null
root, a hidden system message, then the user and assistant messages linked parent → child,
``current_node`` on the last one, and a distinct ``create_time`` per message (the batch's date, 09:00
UTC, then 47 seconds apart). A message's node id names its chat and BEAM id (``beam07-m152``), which is
how a memory is traced back to the message it came from.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_MARKER = re.compile(r"\s*->->.*\Z", re.DOTALL)
ABILITIES = ("contradiction_resolution", "event_ordering", "information_extraction", "instruction_following",
             "knowledge_update", "multi_session_reasoning", "preference_following", "summarization",
             "temporal_reasoning")
MESSAGE_SPACING_S = 47


class Missing(RuntimeError):
    """The BEAM folder is not where the benchmark looks for it."""


@dataclass(frozen=True)
class Message:
    id: int
    role: str
    text: str


@dataclass(frozen=True)
class Batch:
    number: int
    day: str  # ISO date
    messages: tuple[Message, ...]


@dataclass
class Chat:
    number: int
    title: str
    batches: list[Batch]
    questions: list[dict[str, Any]] = field(default_factory=list)  # ability, question, gold (message ids)

    @property
    def name(self) -> str:
        return f"beam{self.number:02d}"

    def messages(self) -> dict[int, Message]:
        return {m.id: m for b in self.batches for m in b.messages}


def root() -> Path:
    given = os.environ.get("VODOU_BEAM")
    if given:
        return Path(given)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "beam" / "100K"


def load(folder: Path | None = None) -> list[Chat]:
    folder = folder or root()
    if not folder.is_dir():
        raise Missing(f"BEAM 100K is not at {folder} (set VODOU_BEAM to its 100K folder); the BEAM set is skipped")
    chats = []
    for sub in sorted((p for p in folder.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
        chats.append(load_chat(sub))
    return chats


def load_chat(sub: Path) -> Chat:
    file = sub / "chat_trunecated.json"
    if not file.exists():
        file = sub / "chat.json"
    raw = json.loads(file.read_text(encoding="utf-8"))
    batches = []
    for b in raw:
        msgs = [m for turn in b["turns"] for m in turn]
        day = datetime.strptime(msgs[0]["time_anchor"], "%B-%d-%Y").date().isoformat()
        batches.append(Batch(int(b["batch_number"]), day, tuple(
            Message(int(m["id"]), m["role"], _MARKER.sub("", m["content"]).strip()) for m in msgs)))
    topic = json.loads((sub / "topic.json").read_text(encoding="utf-8"))
    chat = Chat(int(sub.name), str(topic.get("title") or f"Chat {sub.name}"), batches)
    known = chat.messages()
    probing = json.loads((sub / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
    for ability, questions in probing.items():
        for q in questions:
            gold = sorted(set(gold_ids(ability, q.get("source_chat_ids"))) & set(known))
            if gold:
                chat.questions.append({"ability": ability, "question": q["question"], "gold": gold})
    return chat


def gold_ids(ability: str, ids: Any) -> list[int]:
    if ids is None:
        return []
    if isinstance(ids, dict):
        parts = [ids.get("updated_info")] if ability == "knowledge_update" else list(ids.values())
        return [i for part in parts for i in _flat(part)]
    return _flat(ids)


def _flat(value: Any) -> list[int]:
    if isinstance(value, list):
        return [i for v in value for i in _flat(v)]
    return [int(value)] if isinstance(value, int) and not isinstance(value, bool) else []


def node_id(chat: Chat, message_id: int) -> str:
    return f"{chat.name}-m{message_id}"


def message_of(node: str) -> int | None:
    """The BEAM message id a node id names (``node_id``'s inverse), or None for another node."""
    m = re.fullmatch(r"beam\d+-m(\d+)", node)
    return int(m.group(1)) if m else None


def chatgpt_export(chat: Chat) -> list[dict[str, Any]]:
    """The chat as ChatGPT's ``conversations.json``: one conversation per dated batch."""
    out = []
    for batch in chat.batches:
        start = datetime.fromisoformat(batch.day).replace(hour=9, tzinfo=UTC).timestamp()
        cid = f"{chat.name}-b{batch.number}"
        root_id, system_id = f"{cid}-root", f"{cid}-system"
        mapping: dict[str, Any] = {
            root_id: {"id": root_id, "message": None, "parent": None, "children": [system_id]},
            system_id: {"id": system_id, "parent": root_id, "children": [], "message": {
                "id": system_id, "author": {"role": "system", "name": None, "metadata": {}},
                "create_time": None, "update_time": None,
                "content": {"content_type": "text", "parts": [""]}, "status": "finished_successfully",
                "end_turn": True, "weight": 0.0, "metadata": {"is_visually_hidden_from_conversation": True},
                "recipient": "all"}},
        }
        parent = system_id
        for i, msg in enumerate(batch.messages, start=1):
            node = node_id(chat, msg.id)
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": msg.role, "name": None, "metadata": {}},
                "create_time": start + MESSAGE_SPACING_S * i, "update_time": None,
                "content": {"content_type": "text", "parts": [msg.text]}, "status": "finished_successfully",
                "end_turn": msg.role == "assistant", "weight": 1.0, "metadata": {}, "recipient": "all"}}
            mapping[parent]["children"].append(node)
            parent = node
        out.append({"title": f"{chat.title} ({batch.day})", "create_time": start, "update_time": start,
                    "mapping": mapping, "current_node": parent, "conversation_id": cid, "id": cid,
                    "moderation_results": [], "is_archived": False})
    return out
