"""``python -m bench.ingest``: what an imported AI chat leaves behind, end to end (ING-6, issue 33).

For each BEAM 100K chat (person ↔ AI assistant; ``bench/beam_data.py``, read from the shared data folder,
never copied) and each AI chat of our own set (``bench/data/quality/chats.json``):

1. the chat is written as a real ChatGPT ``conversations.json`` (mapping tree, null root, hidden system
   message, distinct message times) and imported by the real CLI in a child process:
   ``vodou --vault V import chatgpt FILE --project NAME --json``;
2. the vault is embedded with the real model (``backfill``), then every question is searched with the
   product's own search under the project (``SearchService.search(q, FactFilter(project=NAME), k=10)``),
   hybrid and keyword-only;
3. each memory is traced to the message it came from by the vault's own provenance
   (``query.message_entries``: the memory's source event → the export's message id), and a question
   is hit when a top-10 memory came from one of its gold messages.

The baseline, in the same run: plain FTS5 bm25 (``porter unicode61``, an OR of the question's words less
stop words) over the raw messages as the product's reader reads them back from the same export
(``User: …`` / ``Assistant: …``, one per message, cut at 8,000 characters) — the protocol of BEAM's
README. Printed: messages in → memories out, yield per person's message, gold coverage (questions whose
evidence left a memory: the ceiling of any search; overall, distilled memories only, per ability),
search given coverage, pipeline hit@10 / MRR@10 with the ratio to that baseline, and the same per ability.

``--assistant both`` also measures the other way of keeping the assistant's words (the issue asks for
both): as context beside the person's turn (the reply that follows a turn added to the turn's keyword
context, so the turn is found by the reply's words), against keeping only the decisions the person
accepted. Only the bench rewrites the vault for that variant.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import apsw

from bench import beam_data
from vodou_desktop.ingest.exports import conversations, load_export
from vodou_desktop.search.keyword import STOPWORDS
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

K = 10
MAX_MESSAGE_CHARS = 8_000
_WORD = re.compile(r"\w+", re.UNICODE)
REPO = Path(__file__).resolve().parent.parent
OURS = REPO / "bench" / "data" / "quality"


# -- the sets: chats with questions whose gold are message ids -----------------------------------------

@dataclass
class ChatSet:
    name: str  # the project it is imported under
    export: list[dict[str, Any]]  # ChatGPT conversations.json
    questions: list[dict[str, Any]]  # ability, question, gold (message node ids)
    roles: dict[str, str] = field(default_factory=dict)  # node id → role


def beam_sets(chats: Sequence[beam_data.Chat]) -> list[ChatSet]:
    out = []
    for chat in chats:
        export = beam_data.chatgpt_export(chat)
        roles = {beam_data.node_id(chat, m.id): m.role for b in chat.batches for m in b.messages}
        questions = [{"ability": x["ability"], "question": x["question"],
                      "gold": [beam_data.node_id(chat, g) for g in x["gold"]]} for x in chat.questions]
        out.append(ChatSet(chat.name, export, questions, roles))
    return out


def our_sets(folder: Path = OURS) -> list[ChatSet]:
    """Our own AI chats (bench/data/quality): one person's, so one export and one vault for all of them;
    each question's gold is the message holding its tagged sentence."""
    from bench.quality import chatgpt_export, load

    data = load(folder)
    export = chatgpt_export(data["chats"])
    roles: dict[str, str] = {}
    questions = []
    for chat in data["chats"]:
        nodes = [f"{chat['group']}-{i}" for i in range(len(chat["messages"]))]
        roles.update((n, m["role"]) for n, m in zip(nodes, chat["messages"], strict=True))
        for x in data["questions"]:
            if x["group"] == chat["group"]:
                gold = sorted({nodes[int(re.search(r"\.m(\d+)(?:\.|$)", g).group(1)) - 1]  # type: ignore[union-attr]
                               for g in x["gold"]})
                questions.append({"ability": x["kind"], "question": x["question"], "gold": gold})
    return [ChatSet("ours-ai-chats", export, questions, roles)]


# -- one vault per chat, through the real CLI --------------------------------------------------------

@dataclass
class Imported:
    chat: ChatSet
    vault: Path
    report: dict[str, Any]
    messages: dict[str, str]  # node id → "User: …" / "Assistant: …" as the product's reader reads them back
    seconds: float


def import_chat(chat: ChatSet, folder: Path, extra: Sequence[str] = ()) -> Imported:
    folder.mkdir(parents=True, exist_ok=True)
    export = folder / "conversations.json"
    export.write_text(json.dumps(chat.export), encoding="utf-8")
    vault = folder / "vault.sqlite"
    env = {**os.environ, "VODOU_HOME": str(folder / "home"), "VODOU_EMBEDDER": "none"}
    t0 = time.perf_counter()
    python = [sys.executable, "-S"] if sys.flags.no_site else [sys.executable]  # a snapshot run: the same paths
    done = subprocess.run([*python, "-m", "vodou_desktop", "--vault", str(vault), "import", "chatgpt",
                           str(export), "--project", chat.name, "--json", *extra],
                          capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"vodou import failed for {chat.name}: {done.stderr.strip() or done.stdout.strip()}")
    messages = {}
    for conv in conversations(load_export(export), "chatgpt"):
        for m in getattr(conv, "messages", ()):
            messages[m.id] = f"{'User' if m.role == 'user' else 'Assistant'}: {m.text}"[:MAX_MESSAGE_CHARS]
    return Imported(chat, vault, json.loads(done.stdout), messages, seconds)


def memories(vault: Vault) -> dict[int, tuple[str, str, str | None]]:
    """Every memory: id → (kind, message node id, role), by the vault's own provenance."""
    everything = FactFilter(project=ALL_PROJECTS)
    facts = vault.read(partial(q.facts_after, after_id=0, f=everything, limit=1_000_000))
    entries = vault.read(partial(q.message_entries, ids=[f.id for f in facts], f=everything))
    return {f.id: (f.kind, entries[f.id][1], entries[f.id][2]) for f in facts if f.id in entries}


class RawBm25:
    """Plain FTS5 bm25 over the raw messages: the baseline of BEAM's README."""

    def __init__(self, messages: dict[str, str]) -> None:
        self.conn = apsw.Connection(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE m USING fts5(node UNINDEXED, text,"
                          " tokenize='porter unicode61 remove_diacritics 2')")
        with self.conn:
            self.conn.executemany("INSERT INTO m(node, text) VALUES (?, ?)", list(messages.items()))

    def top(self, question: str, k: int = K) -> list[str]:
        words = [w for w in dict.fromkeys(w.casefold() for w in _WORD.findall(question)) if w not in STOPWORDS]
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.conn.execute("SELECT node FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT ?", (match, k))
        return [str(r[0]) for r in rows]


# -- scoring ------------------------------------------------------------------------------------

def first_hit(ranked: Sequence[set[str]], gold: set[str]) -> int | None:
    """The rank (1-based) of the first result that came from a gold message."""
    return next((r for r, came in enumerate(ranked[:K], start=1) if came & gold), None)


@dataclass
class Scores:
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per question

    def add(self, **row: Any) -> None:
        self.rows.append(row)

    def mean(self, key: str, rows: Sequence[dict[str, Any]] | None = None) -> float:
        rows = self.rows if rows is None else rows
        return sum(r[key] for r in rows) / len(rows) if rows else float("nan")

    def by(self, group: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in self.rows:
            out[r[group]].append(r)
        return dict(sorted(out.items()))


def score_chat(imp: Imported, vault: Vault, rankers: dict[str, Callable[[str, str], list[int]]],
               scores: Scores, context_of: Callable[[int], set[str]] | None = None) -> dict[str, Any]:
    """Every question of one chat: coverage and hit@10/MRR@10 per system; returns the chat's yield figures."""
    mem = memories(vault)
    came_from: dict[int, set[str]] = {i: {node} for i, (_, node, _) in mem.items()}
    if context_of is not None:
        for i in came_from:
            came_from[i] |= context_of(i)
    kept = {node for _, node, _ in mem.values()}
    distilled = {node for kind, node, _ in mem.values() if kind != "conversation"}
    raw = RawBm25(imp.messages)
    for x in imp.chat.questions:
        gold = set(x["gold"])
        row = {"set": imp.chat.name, "ability": x["ability"], "covered": float(bool(gold & kept)),
               "covered_distilled": float(bool(gold & distilled))}
        for name, rank in rankers.items():
            hit = first_hit([came_from.get(i, set()) for i in rank(x["question"], imp.chat.name)], gold)
            row[f"{name} hit@10"] = float(hit is not None)
            row[f"{name} mrr@10"] = 1.0 / hit if hit else 0.0
        hit = first_hit([{n} for n in raw.top(x["question"])], gold)
        row["bm25 raw messages hit@10"], row["bm25 raw messages mrr@10"] = float(hit is not None), 1.0 / hit if hit \
            else 0.0
        scores.add(**row)
    users = [n for n, r in imp.chat.roles.items() if r == "user"]
    assistants = [n for n, r in imp.chat.roles.items() if r == "assistant"]
    kinds = Counter(kind for kind, _, _ in mem.values())
    return {"messages": len(users) + len(assistants), "user_messages": len(users),
            "assistant_messages": len(assistants), "memories": len(mem), "kinds": dict(kinds),
            "users_with_distilled": len(distilled & set(users)),
            "from_assistant": sum(1 for _, _, role in mem.values() if role == "assistant")}


def hybrid(service: Any) -> Callable[[str, str], list[int]]:
    def rank(question: str, project: str) -> list[int]:
        return [r.fact.id for r in service.search(question, FactFilter(project=project), k=K)]
    return rank


# -- the run ------------------------------------------------------------------------------------

SYSTEMS = ("pipeline hybrid", "pipeline keyword-only", "bm25 raw messages")


def run_set(sets: Sequence[ChatSet], folder: Path, model: Any, log: Callable[[str], None], variant: str = "accepted",
            cache: Path | None = None) -> tuple[Scores, dict[str, Any]]:
    from bench.quality import CachedVectors
    from vodou_desktop.search.backfill import backfill
    from vodou_desktop.search.embedder import Embedder
    from vodou_desktop.search.service import SearchService
    from vodou_desktop.search.vectors import VectorIndex

    scores = Scores()
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    import_s = 0.0
    for chat in sets:
        imp = import_chat(chat, folder / chat.name)
        import_s += imp.seconds
        vault = Vault.open(imp.vault)
        try:
            context_of = None
            if variant == "context":
                context_of = _reply_as_context(vault, imp)
            if variant == "turns":
                _drop_accepted(vault)
            embedder = CachedVectors(model, cache) if cache else model
            backfill(vault, embedder)
            if cache:
                embedder.save()
            index = VectorIndex(vault)
            index.load()
            rankers = {"pipeline hybrid": hybrid(SearchService(vault, model, index)),
                       "pipeline keyword-only": hybrid(SearchService(vault, Embedder("none"), index))}
            figures = score_chat(imp, vault, rankers, scores, context_of)
            index.close()
        finally:
            vault.close()
        kinds.update(figures.pop("kinds"))
        totals.update(figures)
        log(f"{chat.name}: {figures['memories']} memories from {figures['messages']} messages")
    return scores, {**totals, "kinds": dict(kinds), "import_s": round(import_s, 1)}


def _reply_as_context(vault: Vault, imp: Imported) -> Callable[[int], set[str]]:
    """The variant "context": each person's turn holds the reply after it as keyword context (the bench
    writes it into the turn's context column; the product does not)."""
    mem = memories(vault)
    order = [m["id"] for conv in imp.chat.export for m in _branch(conv)]
    after = {order[i]: order[i + 1] for i in range(len(order) - 1)
             if imp.chat.roles.get(order[i]) == "user" and imp.chat.roles.get(order[i + 1]) == "assistant"}
    updates = [(imp.messages[after[node]][len("Assistant: "):], i) for i, (kind, node, _) in mem.items()
               if kind == "conversation" and node in after]

    def job(conn: apsw.Connection, change: Any) -> None:
        conn.executemany("UPDATE chunks SET context = coalesce(context, '') || ' ' || ? WHERE id = ?", updates)
        change.touch("chunks")

    vault.write(job)
    reply = {i: {after[node]} for i, (kind, node, _) in mem.items() if kind == "conversation" and node in after}
    return lambda i: reply.get(i, set())


def _drop_accepted(vault: Vault) -> None:
    """The variant "turns": no memory from the assistant's words at all (the bench deletes them)."""
    ids = [i for i, (_, _, role) in memories(vault).items() if role == "assistant"]

    def job(conn: apsw.Connection, change: Any) -> None:
        conn.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in ids])
        change.touch("chunks")

    vault.write(job)


def _branch(conv: dict[str, Any]) -> list[dict[str, Any]]:
    node, path = conv["current_node"], []
    while node is not None:
        entry = conv["mapping"][node]
        if entry.get("message") and entry["message"]["author"]["role"] in ("user", "assistant"):
            path.append(entry["message"])
        node = entry.get("parent")
    return list(reversed(path))


# -- report -------------------------------------------------------------------------------------

def report(name: str, scores: Scores, totals: dict[str, Any], variant: str) -> str:
    out = [f"# {name} ({variant}): {len(scores.rows)} questions, {totals['messages']} messages "
           f"({totals['user_messages']} the person's) → {totals['memories']} memories"]
    kinds = totals["kinds"]
    distilled = totals["memories"] - kinds.get("conversation", 0)
    out.append(f"memories by kind: {dict(sorted(kinds.items()))}; distilled per person's message "
               f"{distilled / max(1, totals['user_messages']):.2f}; person's messages with ≥ 1 distilled memory "
               f"{totals['users_with_distilled'] / max(1, totals['user_messages']):.1%}; from accepted replies "
               f"{totals['from_assistant']}")
    out.append(f"gold coverage {scores.mean('covered'):.3f} (distilled memories only "
               f"{scores.mean('covered_distilled'):.3f})")
    for system in SYSTEMS:
        hit, mrr = scores.mean(f"{system} hit@10"), scores.mean(f"{system} mrr@10")
        covered = [r for r in scores.rows if r["covered"]]
        given = f", given coverage {scores.mean(f'{system} hit@10', covered):.3f}" if system != SYSTEMS[-1] else ""
        out.append(f"{system:<24} hit@10 {hit:.3f}  MRR@10 {mrr:.3f}{given}")
    base = scores.mean("bm25 raw messages hit@10")
    for system in SYSTEMS[:2]:
        out.append(f"ratio {system} / bm25 raw messages: hit@10 {scores.mean(f'{system} hit@10') / base:.3f}x  "
                   f"MRR@10 {scores.mean(f'{system} mrr@10') / scores.mean('bm25 raw messages mrr@10'):.3f}x")
    out.append("")
    out.append(f"{'ability':<28}{'n':>4}{'coverage':>10}{'distilled':>10}" + "".join(f"{s.split()[-1][:9]:>11}"
                                                                                    for s in SYSTEMS))
    for ability, rows in scores.by("ability").items():
        out.append(f"{ability:<28}{len(rows):>4}{scores.mean('covered', rows):>10.3f}"
                   f"{scores.mean('covered_distilled', rows):>10.3f}"
                   + "".join(f"{scores.mean(f'{s} hit@10', rows):>11.3f}" for s in SYSTEMS))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest", description=__doc__.split("\n")[0])
    parser.add_argument("--set", dest="sets", choices=("beam", "ours", "both"), default="both")
    parser.add_argument("--chats", type=int, default=0, help="only the first N chats of each set (0: all)")
    parser.add_argument("--assistant", choices=("accepted", "turns", "context", "both"), default="accepted",
                        help="how the assistant's words are kept: the decisions the person accepted (the product), "
                             "none, or each reply as context beside the turn before it; both: all three")
    parser.add_argument("--vector-cache", metavar="DIR", type=Path,
                        help="reuse memory vectors of an earlier run (same model, same text); queries are never cached")
    parser.add_argument("--json", metavar="OUT", type=Path, help="also write the per-question figures here")
    args = parser.parse_args(argv)
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    from bench.search import load_model

    sets: dict[str, list[ChatSet]] = {}
    if args.sets in ("beam", "both"):
        try:
            sets["BEAM 100K"] = beam_sets(beam_data.load())
        except beam_data.Missing as exc:
            print(exc, file=sys.stderr)
    if args.sets in ("ours", "both"):
        sets["ours (AI chats)"] = our_sets()
    if not sets:
        return 0
    model = load_model()
    variants = ("accepted", "turns", "context") if args.assistant == "both" else (args.assistant,)
    texts, dump = [], {}
    log = partial(print, file=sys.stderr)
    for name, chats in sets.items():
        chats = chats[: args.chats] if args.chats else chats
        for variant in variants:
            folder = Path(tempfile.mkdtemp(prefix="vodou-ingest-"))
            try:
                scores, totals = run_set(chats, folder, model, log, variant, args.vector_cache)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            texts.append(report(name, scores, totals, variant))
            print(texts[-1] + "\n", flush=True)
            dump[f"{name}/{variant}"] = {"totals": totals, "questions": scores.rows}
    print(f"total {time.perf_counter() - started:.0f} s, load average {load_before:.2f} -> {os.getloadavg()[0]:.2f},"
          f" {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}")
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(math.floor(main()))
