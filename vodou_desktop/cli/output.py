"""What every CLI command shares: stable JSON for scripts, short lines for people, the model wait."""

from __future__ import annotations

import json
import sys
from typing import Any

from vodou_desktop.governance.ages import format_age
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.embedder import EmbedderState
from vodou_desktop.vault import Fact


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def fact_line(fact: Fact, score: float | None = None) -> str:
    where = f" [{fact.project}]" if fact.project else ""
    host = f" · {fact.site}" if fact.site else ""
    age = format_age(fact.event_time, fact.valid_precision)
    status = " (forgotten)" if fact.forgotten else ""
    head = f"{score:7.3f} " if score is not None else ""
    return f"{head}#{fact.id}{where} {fact.text}  — {fact.tier}{host}, {age}{status}"


def progress_to_stderr(label: str):  # type: ignore[no-untyped-def]
    def report(done: int, total: int) -> None:
        if total >= 50 and sys.stderr.isatty():
            sys.stderr.write(f"\r{label}: {done}/{total}")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    return report


MODEL_WAIT_S = 120


def ensure_embedded(rt: Runtime) -> None:
    """Wait for the model (keyword search is the fallback, said on stderr) and embed what is missing."""
    state = rt.embedder.wait(MODEL_WAIT_S)
    if state is EmbedderState.FAILED:
        print(f"vodou: note: embedding model unavailable, keyword search only ({rt.embedder.error})",
              file=sys.stderr)
    if state is EmbedderState.READY:
        backfill(rt.vault, rt.embedder, progress=progress_to_stderr("embedding"))
