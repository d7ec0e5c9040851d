"""BEAM 100K as a bench.quality set: a person talking with an AI assistant (coding, maths, writing,
finance, health…), 20 machine-generated chats of 188–310 messages in 3–5 dated batches.

The data is not ours to ship (the authors' card: CC BY-SA 4.0; evaluation only): it is read at
benchmark time from ``shared/data/beam/100K/`` beside the checkout (or ``VODOU_BEAM``), never
copied into the repository, a wheel or the bundle. When it is not there, ``load`` raises
``Missing`` and the benchmarks skip the set.

Normalisation and protocol (the folder's README; the issue's figures use them): the generation
marker `` ->-> b,n`` is cut from every message; gold ids are flattened and de-duplicated (a dict's
parts joined, except a knowledge update's, whose gold is ``updated_info`` only); questions without
gold are dropped (354 are scored); one message is one memory, ``User: …`` / ``Assistant: …``, the
batch's date as its day, one project per chat, cut to the 8,000 characters of one memory.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from vodou_desktop.vault.facts import MAX_FACT_CHARS

# The memory abilities scored (abstention has no gold by design).
KINDS = ("contradiction_resolution", "event_ordering", "information_extraction", "instruction_following",
         "knowledge_update", "multi_session_reasoning", "preference_following", "summarization",
         "temporal_reasoning")
_MARKER = re.compile(r"\s*->->[^\n]*\s*$")
SPEAKERS = {"user": "User", "assistant": "Assistant"}


class Missing(RuntimeError):
    """The BEAM folder is not where the benchmark looks for it."""


def path() -> Path:
    given = os.environ.get("VODOU_BEAM")
    if given:
        return Path(given)
    return shared_data("beam", "100K")


def shared_data(*parts: str) -> Path:
    """``shared/data/<parts>`` in the nearest folder above the checkout that has it (the checkout's
    parent in the usual layout; a worktree may sit a level deeper)."""
    here = Path(__file__).resolve().parent
    for folder in here.parents:
        candidate = folder.joinpath("shared", "data", *parts)
        if candidate.exists():
            return candidate
    return here.parents[1].joinpath("shared", "data", *parts)


def clean(text: str) -> str:
    """A message without the generation marker on its last line."""
    return _MARKER.sub("", text).strip()


def gold_ids(ability: str, source: Any) -> list[int]:
    """The README's rule: nested lists flattened, a dict's parts joined (a knowledge update: its
    ``updated_info`` only), duplicates dropped, in first-seen order."""
    if isinstance(source, dict):
        parts = [source.get("updated_info")] if ability == "knowledge_update" else list(source.values())
    else:
        parts = [source]
    out: dict[int, None] = {}

    def walk(x: Any) -> None:
        if isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, int) and not isinstance(x, bool):
            out.setdefault(x, None)

    for part in parts:
        walk(part)
    return list(out)


def batch_day(anchor: str | None) -> str | None:
    """``March-15-2024`` → ``2024-03-15``."""
    try:
        return datetime.strptime(anchor or "", "%B-%d-%Y").date().isoformat()
    except ValueError:
        return None


def load(folder: Path | None = None) -> dict[str, Any]:
    """BEAM 100K in bench.quality's shape: ``memories`` (key, text, project, date, source, group),
    ``questions`` (id, kind, question, project, group, gold keys) and no chats."""
    folder = folder or path()
    if not folder.is_dir():
        raise Missing(f"BEAM 100K is not at {folder} (set VODOU_BEAM to its 100K folder); the BEAM set is skipped")
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for chat_dir in sorted((p for p in folder.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name)):
        group = f"beam-{int(chat_dir.name):02d}"
        chat_file = chat_dir / "chat_trunecated.json"  # sic: the benchmark's own name for the cut chat
        if not chat_file.is_file():
            chat_file = chat_dir / "chat.json"
        keys: set[str] = set()
        for batch in json.loads(chat_file.read_text(encoding="utf-8")):
            messages = [m for turn in batch["turns"] for m in turn]
            day = batch_day(next((m.get("time_anchor") for m in messages if m.get("time_anchor")), None))
            for m in messages:
                text = f"{SPEAKERS[m['role']]}: {clean(m['content'])}"[:MAX_FACT_CHARS]
                key = f"{group}.{m['id']}"
                keys.add(key)
                memories.append({"key": key, "text": text, "project": group, "date": day,
                                 "source": "conversation", "group": group})
        probing = json.loads((chat_dir / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
        for ability in KINDS:
            for i, x in enumerate(probing.get(ability, [])):
                gold = [f"{group}.{g}" for g in gold_ids(ability, x.get("source_chat_ids"))]
                gold = [g for g in gold if g in keys]
                if not gold:
                    continue
                questions.append({"id": f"{group}.{ability}.{i}", "kind": ability, "question": x["question"],
                                  "project": group, "group": group, "split": "all", "gold": gold})
    return {"memories": memories, "questions": questions, "chats": []}
