"""LoCoMo-10 as a bench.quality set: real long multi-session conversations between two people.

The data is not ours to ship (CC BY-NC 4.0, evaluation only): it is read at benchmark time from
``../shared/data/locomo/locomo10.json`` beside the checkout (or ``VODOU_LOCOMO``), never copied into
the repository, a wheel or the bundle. When it is not there, ``load`` raises ``Missing`` with a
sentence saying so, and the benchmarks skip the set.

Protocol (the one the issue measured): one memory per turn, ``Speaker: text`` (plus
`` [image: caption]`` when the turn shared a picture), the session's date as the memory's day, one
project per conversation, stored in order through the real write path; categories 1–4 are scored
(5, adversarial, has no evidence to find); a hit is any evidence turn in the top 10.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

# LoCoMo's question categories, in the words of its paper.
CATEGORIES = {1: "multihop", 2: "temporal", 3: "open-domain", 4: "single"}
KINDS = ("single", "multihop", "temporal", "open-domain")
_DIA = re.compile(r"D\d+:\d+")


class Missing(RuntimeError):
    """The LoCoMo file is not where the benchmark looks for it."""


def path() -> Path:
    given = os.environ.get("VODOU_LOCOMO")
    if given:
        return Path(given)
    from bench.beam import shared_data

    return shared_data("locomo", "locomo10.json")


def load(file: Path | None = None) -> dict[str, Any]:
    """LoCoMo in bench.quality's shape: ``memories`` (key, text, project, date, source, group),
    ``questions`` (id, kind, question, project, group, gold keys) and no chats."""
    file = file or path()
    if not file.is_file():
        raise Missing(f"LoCoMo is not at {file} (set VODOU_LOCOMO to its locomo10.json); "
                      "the LoCoMo set is skipped")
    conversations = json.loads(file.read_text(encoding="utf-8"))
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for conv in conversations:
        group = f"locomo-{conv['sample_id']}"
        talk = conv["conversation"]
        sessions = sorted(int(k.split("_")[1]) for k in talk if re.fullmatch(r"session_\d+", k))
        keys: set[str] = set()
        for n in sessions:
            day = session_day(talk.get(f"session_{n}_date_time", ""))
            for turn in talk[f"session_{n}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                key = f"{group}.{turn['dia_id']}"
                keys.add(key)
                memories.append({"key": key, "text": text, "project": group, "date": day,
                                 "source": "conversation", "group": group})
        for i, qa in enumerate(conv["qa"]):
            kind = CATEGORIES.get(int(qa.get("category", 0)))
            gold = [f"{group}.{d}" for ev in qa.get("evidence", []) for d in _DIA.findall(str(ev))]
            gold = [g for g in gold if g in keys]
            if kind is None or not gold:
                continue
            questions.append({"id": f"{group}.q{i:03d}", "kind": kind, "question": qa["question"],
                              "project": group, "group": group, "split": "all", "gold": gold})
    return {"memories": memories, "questions": questions, "chats": []}


def session_day(stamp: str) -> str | None:
    """"1:56 pm on 8 May, 2023" → "2023-05-08" (None when it does not parse)."""
    m = re.search(r"(\d{1,2}) (\w+),? (\d{4})", stamp or "")
    if not m:
        return None
    try:
        return datetime.strptime(f"{m.group(1)} {m.group(2)} {m.group(3)}", "%d %B %Y").date().isoformat()
    except ValueError:
        return None
