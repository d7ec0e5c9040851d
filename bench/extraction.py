"""Precision and recall of the deterministic extractor on labelled data (ING-5, ING-6).

``python -m bench.extraction [--verbose]``. Three labelled sets, each measured both ways:

- **ours, sentences** (``bench/data/extraction/ours.jsonl``): one sentence a line, as a person writes to an
  assistant, labelled keep/drop and with its kind (fact, preference, plan, decision, instruction; a list
  where more than one is right). Written for Vodou, in other words than BEAM's.
- **BEAM 100K, sentences** (``bench/data/extraction/beam.jsonl``): every sentence of 80 of the person's
  messages drawn at random (seed 33) from BEAM, labelled by hand. The file holds labels only — chat,
  message id, sentence number and a short hash of the sentence, never its text; the text is read from
  BEAM at bench time (``bench/beam_data.py``), and a label whose hash no longer matches (the sentence
  splitter changed) is counted as stale and left out. Chats 1–10 are the dev half the rules were tuned
  on, 11–20 the test half.
- **ours, whole messages** (``tests/data/extraction_labelled.jsonl``): the exact memories expected from a
  message (after whitespace and case folding).

A sentence is predicted "keep" when the extractor left at least one memory from it (``Bullet.sentence``).
Precision: of the sentences kept, the share labelled keep; recall: of those labelled keep, the share
kept; kind: of the sentences rightly kept, the share whose first memory has a right kind. Figures are
printed, not asserted; the point is which way a change to the rules moves them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vodou_desktop.ingest.extract import Bullet, extract_bullets, sentences

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "extraction_labelled.jsonl"
OURS = ROOT / "bench" / "data" / "extraction" / "ours.jsonl"
BEAM = ROOT / "bench" / "data" / "extraction" / "beam.jsonl"


def sentence_hash(sentence: str) -> str:
    return hashlib.sha256(" ".join(sentence.split()).encode()).hexdigest()[:12]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _kinds(label: Any) -> set[str]:
    return set(label) if isinstance(label, list) else {label} if label else set()


def score(items: Iterable[tuple[dict[str, Any], list[Bullet]]], verbose: bool = False) -> dict[str, Any]:
    """Keep precision and recall, and kind accuracy, over (label, memories from that sentence) pairs."""
    tp = fp = fn = tn = kind_ok = 0
    by_kind: Counter[str] = Counter()
    found_kind: Counter[str] = Counter()
    for label, got in items:
        kept = bool(got)
        if label["keep"] and kept:
            tp += 1
            right = got[0].kind in _kinds(label["kind"])
            kind_ok += right
            if verbose and not right:
                print(f"  kind {got[0].kind} ≠ {label['kind']}: {label.get('where')}")
        elif kept:
            fp += 1
            if verbose:
                print(f"  kept, labelled drop: {label.get('where')} → {[b.text for b in got]}")
        elif label["keep"]:
            fn += 1
            if verbose:
                print(f"  dropped, labelled {label['kind']}: {label.get('where')}")
        else:
            tn += 1
        if label["keep"]:
            for k in _kinds(label["kind"]):
                by_kind[k] += 1
                found_kind[k] += kept
    return {"precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
            "kind": kind_ok / tp if tp else 1.0, "sentences": tp + fp + fn + tn, "keep": tp + fn, "kept": tp + fp,
            "recall_by_kind": {k: found_kind[k] / n for k, n in sorted(by_kind.items())}}


def evaluate_ours(path: Path = OURS, verbose: bool = False) -> dict[str, Any]:
    items = []
    for label in _lines(path):
        label["where"] = label["text"]
        items.append((label, extract_bullets(label["text"])))
    return score(items, verbose)


def evaluate_beam(path: Path = BEAM, split: str = "all", verbose: bool = False) -> dict[str, Any]:
    """The BEAM labels against BEAM's text (read now); raises ``beam_data.Missing`` when BEAM is absent."""
    from bench import beam_data

    chats = {c.number: c.messages() for c in beam_data.load()}
    items, stale = [], 0
    for label in _lines(path):
        if split != "all" and label["split"] != split:
            continue
        text = chats[label["chat"]][label["message"]].text
        found = sentences(text)
        if label["sentence"] >= len(found) or sentence_hash(found[label["sentence"]]) != label["sha"]:
            stale += 1
            continue
        label["where"] = f"chat {label['chat']} message {label['message']} sentence {label['sentence']}: " \
                         f"{found[label['sentence']][:160]}"
        items.append((label, [b for b in extract_bullets(text) if b.sentence == label["sentence"]]))
    result = score(items, verbose)
    result["stale"] = stale
    return result


def evaluate(path: Path = LABELLED, verbose: bool = False) -> dict[str, float]:
    """Whole messages: exact memories expected against those extracted."""
    tp = predicted = expected = 0
    for item in _lines(path):
        got = {_norm(b.text) for b in extract_bullets(item["text"])}
        want = {_norm(t) for t in item["expected"]}
        tp += len(got & want)
        predicted += len(got)
        expected += len(want)
        if verbose and got != want:
            print(f"  miss: {item['text']!r}\n    got  {sorted(got)}\n    want {sorted(want)}")
    precision = tp / predicted if predicted else 1.0
    recall = tp / expected if expected else 1.0
    return {"precision": precision, "recall": recall, "predicted": predicted, "expected": expected, "correct": tp}


def line(name: str, r: dict[str, Any]) -> str:
    kinds = ", ".join(f"{k} {v:.2f}" for k, v in r["recall_by_kind"].items())
    stale = f", {r['stale']} stale labels" if r.get("stale") else ""
    return (f"{name:<28} precision {r['precision']:.3f}  recall {r['recall']:.3f}  kind {r['kind']:.3f}  "
            f"({r['kept']} kept of {r['sentences']} sentences, {r['keep']} labelled keep{stale}; recall by kind: "
            f"{kinds})")


def main() -> None:
    from bench import beam_data

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every disagreement")
    args = parser.parse_args()
    print(line("ours, sentences", evaluate_ours(verbose=args.verbose)))
    try:
        for split in ("dev", "test"):
            print(line(f"BEAM 100K {split}, sentences", evaluate_beam(split=split, verbose=args.verbose)))
    except beam_data.Missing as exc:
        print(exc)
    r = evaluate(verbose=args.verbose)
    print(f"{'ours, whole messages':<28} precision {r['precision']:.3f}  recall {r['recall']:.3f}  "
          f"({r['correct']:.0f} exact of {r['predicted']:.0f} extracted, {r['expected']:.0f} expected)")


if __name__ == "__main__":
    main()
