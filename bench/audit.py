"""``python -m bench.audit``: a seeded sample of what an imported AI chat distils, labelled by hand.

Every BEAM 100K chat is imported by the real CLI (``bench.ingest.import_chat``: ``vodou import chatgpt
FILE --project NAME``), and 60 of the distilled memories (every kind but the person's messages kept
whole) are drawn with a fixed seed. Each is named by its chat, the message it came from (the vault's own
provenance) and the sentence of that message it came from (the extractor's numbering), never by its
text: ``bench/data/extraction/audit.jsonl`` holds the labels (``useful``, ``partial``, ``junk``) and a
short hash of the memory's text, so a changed extraction shows as a label that no longer matches.

``--show`` prints the sample with the message's sentence beside each memory, for labelling; without it,
the committed labels are matched to the sample and the shares printed (a memory whose hash changed is
counted apart, as unlabelled). Also counted: memories that are a question (none may be).

Sixty is a small sample (a share near 75 % is known to about ±6 points), and every change to the rules
draws a different sixty from a different pool. The labels of earlier draws are kept, so the shares are
also printed over every labelled memory the current rules still produce: a larger sample of the same
pool, drawn at random by earlier seeded draws.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from bench import beam_data
from bench.ingest import beam_sets, import_chat
from vodou_desktop.ingest.extract import clean, distil_sentence, sentences
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q

LABELS = Path(__file__).parent / "data" / "extraction" / "audit.jsonl"
SEED = 60
SIZE = 60
LABEL_WORDS = ("useful", "partial", "junk")


def _sha(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:12]


def _sentence_of(text: str, message: str) -> tuple[int | None, str]:
    """The number of the message's sentence the memory was distilled from, and that sentence."""
    want = " ".join(text.casefold().split())
    for number, sentence in enumerate(sentences(clean(message))):
        if any(" ".join(b.text.casefold().split()) == want for b in distil_sentence(sentence, number)):
            return number, sentence
    return None, ""


def draw(everything: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The seeded sixty, drawn from every distilled memory (``pool``)."""
    return random.Random(SEED).sample(everything, SIZE)


def pool(folder: Path) -> list[dict[str, Any]]:
    """Every distilled memory of every BEAM chat, in a fixed order."""
    drawn: list[dict[str, Any]] = []
    for chat in beam_sets(beam_data.load()):
        imp = import_chat(chat, folder / chat.name)
        vault = Vault.open(imp.vault)
        try:
            everything = FactFilter(project=ALL_PROJECTS)
            facts = vault.read(partial(q.facts_after, after_id=0, f=everything, limit=1_000_000))
            entries = vault.read(partial(q.message_entries, ids=[f.id for f in facts], f=everything))
        finally:
            vault.close()
        for fact in facts:
            if fact.kind == "conversation" or fact.id not in entries:
                continue
            node, role = entries[fact.id][1], entries[fact.id][2]
            message = imp.messages.get(node or "", "").split(": ", 1)[-1]
            number, sentence = _sentence_of(fact.text, message) if role != "assistant" else (None, "")
            drawn.append({"chat": chat.name, "message": beam_data.message_of(node or ""), "sentence": number,
                          "role": role or "user", "kind": fact.kind, "sha": _sha(fact.text), "text": fact.text,
                          "source": sentence})
    drawn.sort(key=lambda d: (d["chat"], d["message"] or 0, d["sentence"] if d["sentence"] is not None else -1,
                              d["sha"]))
    return drawn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.audit", description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print the sample for labelling")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="vodou-audit-") as tmp:
            everything = pool(Path(tmp))
    except beam_data.Missing as exc:
        print(exc, file=sys.stderr)
        return 0
    drawn = draw(everything)
    if args.show:
        for n, d in enumerate(drawn, 1):
            print(json.dumps({k: d[k] for k in ("chat", "message", "sentence", "role", "kind", "sha")}))
            print(f"  {n:2}. memory: {d['text']}\n      from:   {d['source'] or '(an accepted reply)'}")
        return 0
    labels = {(r["chat"], r["message"], r["sentence"], r["sha"]): r["label"]
              for r in map(json.loads, LABELS.read_text(encoding="utf-8").splitlines()) if r}

    def label(d: dict[str, Any]) -> str:
        return labels.get((d["chat"], d["message"], d["sentence"], d["sha"]), "unlabelled")

    counts = dict.fromkeys((*LABEL_WORDS, "unlabelled"), 0)
    for d in drawn:
        counts[label(d)] += 1
    questions = sum(d["text"].rstrip().endswith("?") for d in drawn)
    print(f"# {SIZE} distilled memories of BEAM 100K through vodou import chatgpt (seed {SEED}), "
          f"of {len(everything)}")
    for word in (*LABEL_WORDS, "unlabelled"):
        print(f"{word:<11} {counts[word]:3}  {counts[word] / SIZE:.0%}")
    print(f"stored as a question: {questions}")
    known = [label(d) for d in everything if label(d) != "unlabelled"]
    print(f"# every labelled memory the rules still produce: {len(known)} of {len(labels)} labels")
    for word in LABEL_WORDS:
        print(f"{word:<11} {known.count(word):3}  {known.count(word) / max(len(known), 1):.0%}")
    print(f"stored as a question, of all {len(everything)}: "
          f"{sum(d['text'].rstrip().endswith('?') for d in everything)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
