"""Precision and recall of the deterministic extractor on the labelled set (ING-5).

``python -m bench.extraction [--verbose]``. A predicted bullet counts as correct when it equals an
expected bullet after whitespace and case folding. The numbers are printed, not asserted: the
set is small and hand-written, and its purpose is to show which way a change to the rules moves.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vodou_desktop.ingest.extract import extract_bullets

LABELLED = Path(__file__).resolve().parent.parent / "tests" / "data" / "extraction_labelled.jsonl"


def _norm(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def evaluate(path: Path = LABELLED, verbose: bool = False) -> dict[str, float]:
    tp = predicted = expected = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="print every disagreement")
    args = parser.parse_args()
    r = evaluate(verbose=args.verbose)
    print(f"extraction: precision {r['precision']:.3f}  recall {r['recall']:.3f}  "
          f"({r['correct']:.0f} correct of {r['predicted']:.0f} predicted, {r['expected']:.0f} expected)")


if __name__ == "__main__":
    main()
