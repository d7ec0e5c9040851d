"""``python -m bench.secrets``: what the secret filter (vault/secret_filter.py) costs and what it
wrongly changes.

1. False positives: every memory of the repository's quality set (bench/data/quality), every LoCoMo
   turn and every BEAM message (person <-> AI assistant, much of it code), read from
   ``../shared/data`` beside the checkout (or ``VODOU_LOCOMO`` / ``VODOU_BEAM``; skipped when
   absent, never copied). A memory counts when the filter changes it; none of them holds a real
   secret, so each change is a false positive (the placeholder kinds are printed).
2. Detection: generated secrets of each kind in a sentence (tokens of the documented formats, real
   private keys made by ``cryptography``, passwords in assignments): the share removed.
3. Cost per memory, in this process: ``scrub_text`` alone over each corpus, against the write it
   rides on (``remember`` of the same memory into a vault, filter off), and the same writes with it
   on; the one-time load of the library in a fresh interpreter; ``vodou mem add`` end to end with the
   filter on and off for the cli source; a ChatGPT import of the BEAM chats with it on and off.
Prints figures; never asserts.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from vodou_desktop.vault.secret_filter import scrub_text

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def quality() -> list[str]:
    rows = (ROOT / "bench" / "data" / "quality" / "memories.jsonl").read_text().splitlines()
    return [json.loads(r)["text"] for r in rows]


def locomo() -> list[str] | None:
    path = Path(os.environ.get("VODOU_LOCOMO") or SHARED / "locomo" / "locomo10.json")
    if not path.is_file():
        return None
    out = []
    for conv in json.loads(path.read_text()):
        for turns in conv["conversation"].values():
            if isinstance(turns, list):
                out += [f"{t['speaker']}: {t['text']}" for t in turns]
    return out


def beam_chats() -> list[list[dict[str, Any]]] | None:
    root = Path(os.environ.get("VODOU_BEAM") or SHARED / "beam")
    chats = []
    for folder in sorted((root / "100K").glob("*"), key=lambda p: int(p.name) if p.name.isdigit() else 0):
        file = folder / "chat_trunecated.json"
        file = file if file.exists() else folder / "chat.json"
        if file.exists():
            messages = [m for batch in json.loads(file.read_text()) for turn in batch["turns"] for m in turn]
            chats.append([{**m, "content": m["content"].split("->->")[0].strip()[:8000]} for m in messages])
    return chats or None


def beam() -> list[str] | None:
    chats = beam_chats()
    return None if chats is None else [f"{m['role'].title()}: {m['content']}" for c in chats for m in c]


def false_positives(name: str, texts: list[str]) -> None:
    changed = [(t, scrub_text(t)) for t in texts]
    hits = [(t, r) for t, r in changed if r.text != t]
    kinds = Counter(k for _, r in hits for k in r.kinds)
    print(f"  {name:8s} {len(texts):6,} memories  changed {len(hits):4}  ({len(hits) / len(texts):.2%})"
          f"  kinds {dict(kinds)}")
    for text, result in hits[:4]:
        at = result.text.find("[secret removed")
        print(f"      e.g. …{text[max(0, at - 50):at + 40]!r}")


def _token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(random.choice(alphabet) for _ in range(n))


def detection(n: int = 40) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    def pem(key: Any, fmt: Any) -> str:
        return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()

    makers = {
        "GitHub token": lambda: f"{random.choice(['ghp', 'gho', 'ghs', 'ghu'])}_{_token(36)}",
        "AWS key id": lambda: "AKIA" + _token(16, string.ascii_uppercase + string.digits),
        "Slack token": lambda: f"xoxb-{_token(11, string.digits)}-{_token(13, string.digits)}-{_token(24)}",
        "Stripe key": lambda: f"sk_live_{_token(24)}",
        "PEM RSA": lambda: pem(rsa.generate_private_key(public_exponent=65537, key_size=2048),
                               serialization.PrivateFormat.TraditionalOpenSSL),
        "PEM EC": lambda: pem(ec.generate_private_key(ec.SECP256R1()), serialization.PrivateFormat.PKCS8),
        "OpenSSH": lambda: pem(ed25519.Ed25519PrivateKey.generate(), serialization.PrivateFormat.OpenSSH),
        "password =": lambda: f'DB_PASSWORD="{_token(6)}{random.choice("!#%&")}{_token(5, string.digits)}"',
        "URL password": lambda: f"postgres://app:{_token(14)}@db.internal.example/app",
    }
    for name, make in makers.items():
        found = 0
        for _ in range(n):
            secret = make().strip()
            text = f"Note for the Atlas deploy: {secret} (rotate in May)."
            result = scrub_text(text)
            body = [w for w in secret.replace("\n", " ").split() if len(w) >= 12 and "PRIVATE" not in w]
            found += bool(result.kinds) and not any(w in result.text for w in body)
        print(f"  {name:13s} removed {found}/{n}")


def _per_memory(texts: list[str]) -> tuple[float, float]:
    times = []
    for text in texts:
        start = time.perf_counter()
        scrub_text(text)
        times.append(time.perf_counter() - start)
    times.sort()
    return statistics.mean(times) * 1e6, times[int(len(times) * 0.95)] * 1e6


def cost(corpora: dict[str, list[str]]) -> None:
    for name, texts in corpora.items():
        mean, p95 = _per_memory(texts)
        chars = statistics.mean(len(t) for t in texts)
        print(f"  {name:8s} scrub_text: mean {mean:7.1f} µs, p95 {p95:8.1f} µs per memory ({chars:,.0f} chars)")


def write_cost(texts: list[str], n: int = 1500) -> None:
    from vodou_desktop.ingest.remember import Origin, remember
    from vodou_desktop.vault import Vault, secret_filter

    sample = texts[:n]
    with tempfile.TemporaryDirectory() as folder, Vault.open(Path(folder) / "v.sqlite") as vault:
        figures = {}
        for state in ("off", "on", "off again"):
            vault.write(lambda c, ch, on=state == "on": secret_filter.set_filter(c, ch, "bench", on))
            start = time.perf_counter()
            for text in sample:
                remember(vault, text, Origin(kind="bench"))
            figures[state] = (time.perf_counter() - start) / len(sample) * 1e6
        base = (figures["off"] + figures["off again"]) / 2
        print(f"  remember() per memory: filter off {base:7.1f} µs, on {figures['on']:7.1f} µs"
              f"  (x{figures['on'] / base:.2f}; off runs {figures['off']:.0f} and {figures['off again']:.0f} µs)")


def load_cost(runs: int = 3) -> None:
    code = ("import time; t = time.perf_counter(); from vodou_desktop.vault import secret_filter;"
            " secret_filter.warm_up(); print(time.perf_counter() - t)")
    times = sorted(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                        check=True, cwd=ROOT).stdout) for _ in range(runs))
    print(f"  library load in a fresh interpreter: median {statistics.median(times) * 1000:.0f} ms"
          f" ({', '.join(f'{t * 1000:.0f}' for t in times)})")


def cli_cost(runs: int = 5) -> None:
    vodou = Path(sys.executable).with_name("vodou")
    with tempfile.TemporaryDirectory() as folder:
        vault = str(Path(folder) / "v.sqlite")
        env = {**os.environ, "VODOU_HOME": folder, "VODOU_EMBEDDER": "none"}

        def run(*args: str) -> float:
            start = time.perf_counter()
            subprocess.run([str(vodou), "--vault", vault, *args], env=env, check=True, capture_output=True)
            return time.perf_counter() - start

        run("mem", "add", "the first memory makes the vault")
        figures: dict[str, list[float]] = {"on": [], "off": []}
        for i in range(runs):  # interleaved, so that machine noise falls on both
            for state in ("off", "on"):
                run("secrets", state, "cli")
                figures[state].append(run("mem", "add", f"We moved the Atlas standup to 9:30, run {i}"))
        off, on = (statistics.median(figures[s]) * 1000 for s in ("off", "on"))
        print(f"  vodou mem add end to end (median of {runs}): filter off {off:.0f} ms, on {on:.0f} ms"
              f" (+{on - off:.0f} ms)")


def import_cost(chats: list[list[dict[str, Any]]]) -> None:
    from vodou_desktop.ingest.importer import import_export
    from vodou_desktop.vault import Vault, secret_filter

    convs = []
    for n, chat in enumerate(chats):
        mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "message": None}}
        parent = "root"
        for m in chat:
            node = f"c{n}m{m['id']}"
            mapping[node] = {"id": node, "parent": parent, "message": {
                "id": node, "author": {"role": m["role"]}, "content": {"parts": [m["content"]]},
                "create_time": 1.7e9 + m["id"]}}
            parent = node
        convs.append({"id": f"c{n}", "title": f"chat {n}", "mapping": mapping, "current_node": parent})
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "conversations.json"
        export.write_text(json.dumps(convs))
        figures = {}
        for state in ("off", "on"):
            with Vault.open(Path(folder) / f"{state}.sqlite") as vault:
                vault.write(lambda c, ch, on=state == "on": secret_filter.set_filter(c, ch, "import_chatgpt", on))
                start = time.perf_counter()
                report = import_export(vault, export, "chatgpt")
                figures[state] = time.perf_counter() - start
        users = sum(1 for c in chats for m in c if m["role"] == "user")
        extra = (figures["on"] - figures["off"]) / users * 1e3
        print(f"  import chatgpt, BEAM ({users:,} user messages, {report.facts:,} memories): filter off "
              f"{figures['off']:.2f} s, on {figures['on']:.2f} s (+{extra:.2f} ms per message;"
              f" {len(report.secrets_removed)} removed)")


def main() -> None:
    random.seed(7)
    corpora: dict[str, list[str]] = {"quality": quality()}
    for name, load in (("LoCoMo", locomo), ("BEAM", beam)):
        texts = load()
        if texts is None:
            print(f"{name} not found under {SHARED}: skipped")
        else:
            corpora[name] = texts
    scrub_text("load the library before timing")
    print("False positives (memories the filter changed; none holds a real secret):")
    for name, texts in corpora.items():
        false_positives(name, texts)
    print("Detection (generated secrets in a sentence):")
    detection()
    print("Cost:")
    cost(corpora)
    write_cost(corpora["quality"])
    load_cost()
    cli_cost()
    chats = beam_chats()
    if chats:
        import_cost(chats)


if __name__ == "__main__":
    main()
