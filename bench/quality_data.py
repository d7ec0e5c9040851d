"""``python -m bench.quality_data``: build the labelled retrieval set of ``bench.quality``.

Reads the hand-written sources in ``bench/data/quality/src/`` and writes
``bench/data/quality/memories.jsonl``, ``questions.jsonl`` and ``chats.json``. Deterministic (fixed
seed): running it twice gives the same files.

Sources (see ``bench/data/quality/README.md`` for the formats):
- ``conversations/*.txt``: one two-person conversation each, sessions with dates, hand-written
  turns (``Name: text``, ``@key`` tags a turn that questions point at) and questions
  (``? kind key1,key2: text``). Blank lines separate beats: runs of turns that stay together.
- ``filler.txt``: small-talk exchanges (``A:``/``B:`` turns, ``{A}``/``{B}``/``{friend}``/... slots)
  that pad each conversation between beats and in extra sessions, as real chats are padded.
- ``chats.txt``: AI chats (user/assistant). The harness stores them through the ChatGPT importer,
  which keeps each of the user's messages whole (a ``chat_turn`` memory, key ``<chat>.mNN``) and the
  sentences of them that carry durable information (``chat`` memories, ``<chat>.mNN.bK``: exactly what
  ``extract_bullets`` keeps; a tagged sentence it would drop is an error). A chat question's gold is the
  tagged sentence's memory and the message holding it: either answers it.
- ``notes.txt``: short notes and page facts (``page: URL | title`` then ``p:`` lines).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from vodou_desktop.ingest.extract import extract_bullets

DATA = Path(__file__).parent / "data" / "quality"
SRC = DATA / "src"
KINDS = ("single", "multihop", "temporal", "paraphrase", "reply")
SEED = 20231104
TURNS_PER_CONVERSATION = 420
_TAG = re.compile(r"\s+@([\w.-]+)\s*$")
_QUESTION = re.compile(r"^\?\s*(\w+)\s+([\w.,-]+)\s*:\s*(.+)$")
_TURN = re.compile(r"^([^:\s][^:]{0,30}):\s+(.+)$")
_SLOT = re.compile(r"\{(\w+)\}")

GLOBAL_SLOTS: dict[str, list[str]] = {
    "food": ["dumplings", "a lentil soup", "tacos", "ramen", "a tray of roast vegetables", "pancakes",
             "leftover curry", "a mushroom risotto", "falafel wraps", "grilled cheese", "pho", "shakshuka"],
    "show": ["that Danish crime series", "the baking competition", "a documentary about octopuses",
             "the new season of the lawyer show", "an old Columbo episode", "the figure skating final",
             "a nature program about deserts", "the quiz show with the grumpy host"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "weather": ["pouring all day", "grey and cold", "weirdly warm", "windy enough to lose an umbrella",
                "bright but freezing", "muggy", "foggy until noon", "sleeting"],
}


class SourceError(ValueError):
    """A hand-written source file is malformed; the message names the file and line."""


@dataclass
class Turn:
    speaker: str
    text: str
    key: str | None = None


@dataclass
class Session:
    day: date
    beats: list[list[Turn]] = field(default_factory=list)
    written: bool = True  # False: a filler-only session added by the generator


@dataclass
class Question:
    kind: str
    gold: list[str]
    text: str
    where: str


@dataclass
class Conversation:
    name: str
    people: tuple[str, str]
    split: str
    slots: dict[str, list[str]]
    sessions: list[Session]
    questions: list[Question]


# -- conversations ------------------------------------------------------------------------------

def parse_conversation(path: Path) -> Conversation:
    header: dict[str, str] = {}
    sessions: list[Session] = []
    questions: list[Question] = []
    beat: list[Turn] | None = None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path.name}:{n}"
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not line:
            beat = None
            continue
        if line.startswith("session "):
            sessions.append(Session(date.fromisoformat(line.split()[1])))
            beat = None
            continue
        if line.startswith("?"):
            m = _QUESTION.match(line)
            if not m or m.group(1) not in KINDS:
                raise SourceError(f"{where}: bad question line {line!r}")
            questions.append(Question(m.group(1), m.group(2).split(","), m.group(3).strip(), where))
            continue
        m = _TURN.match(line)
        if not m:
            raise SourceError(f"{where}: not a turn, question or header: {line!r}")
        if not sessions:
            header[m.group(1).strip().lower()] = m.group(2).strip()
            continue
        people = tuple(p.strip() for p in header["people"].split("|"))
        speaker, text = m.group(1).strip(), m.group(2).strip()
        if speaker not in people:
            raise SourceError(f"{where}: speaker {speaker!r} is not one of {people}")
        tag = _TAG.search(text)
        turn = Turn(speaker, _TAG.sub("", text) if tag else text, tag.group(1) if tag else None)
        if beat is None:
            beat = []
            sessions[-1].beats.append(beat)
        beat.append(turn)
    people2 = tuple(p.strip() for p in header["people"].split("|"))
    if len(people2) != 2:
        raise SourceError(f"{path.name}: 'people' must name two people")
    slots: dict[str, list[str]] = {k: [v.strip() for v in header[k].split("|")]
                                   for k in ("friend", "place", "topic") if k in header}
    return Conversation(header["conversation"], (people2[0], people2[1]), header["split"], slots, sessions,
                        questions)


def parse_filler(path: Path) -> list[list[tuple[str, str]]]:
    """Exchanges of ``A:``/``B:`` turns separated by blank lines."""
    exchanges: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for raw in path.read_text(encoding="utf-8").splitlines() + [""]:
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not line:
            if current:
                exchanges.append(current)
            current = []
            continue
        role, _, text = line.partition(":")
        if role not in ("A", "B") or not text.strip():
            raise SourceError(f"{path.name}: bad line {line!r}")
        current.append((role, text.strip()))
    return exchanges


def _fill_slots(text: str, slots: dict[str, str | list[str]], rng: random.Random) -> str:
    def sub(m: re.Match[str]) -> str:
        value = slots.get(m.group(1))
        if value is None:
            value = GLOBAL_SLOTS.get(m.group(1))
        if value is None:
            raise SourceError(f"filler slot {{{m.group(1)}}} has no values")
        return value if isinstance(value, str) else rng.choice(value)

    return _SLOT.sub(sub, text)


def pad(conv: Conversation, filler: list[list[tuple[str, str]]], topical: list[list[tuple[str, str]]],
        rng: random.Random, target: int = TURNS_PER_CONVERSATION) -> None:
    """Add filler-only sessions between written ones and filler exchanges between beats: small talk,
    and (half of the exchanges) talk that names one of the conversation's topics and says nothing new."""
    sessions: list[Session] = []
    for i, s in enumerate(conv.sessions):
        sessions.append(s)
        nxt = conv.sessions[i + 1].day if i + 1 < len(conv.sessions) else s.day + timedelta(days=30)
        gap = (nxt - s.day).days
        for _ in range(rng.randint(1, 2) if gap >= 6 else 0):
            day = s.day + timedelta(days=rng.randint(2, gap - 2))
            sessions.append(Session(day, [], written=False))
    sessions.sort(key=lambda s: s.day)
    conv.sessions = sessions
    pools = [(filler, rng.sample(range(len(filler)), len(filler)))]
    if topical and conv.slots.get("topic"):
        pools.append((topical, rng.sample(range(len(topical)), len(topical))))
    used = [0, 0]

    def count() -> int:
        return sum(len(b) for s in conv.sessions for b in s.beats)

    total = count()
    while total < target:
        # Filler-only sessions fill first (they have few turns); then any gap between beats.
        light = [s for s in conv.sessions if not s.written and sum(map(len, s.beats)) < 14]
        session = rng.choice(light) if light and rng.random() < 0.6 else rng.choice(conv.sessions)
        topics = [t for t, since in _topics(conv) if since is None or since <= session.day]
        which = rng.randrange(len(pools)) if topics else 0
        pool, order = pools[which]
        exchange = pool[order[used[which] % len(order)]]
        used[which] += 1
        first = rng.randrange(2)
        names = {"A": conv.people[first], "B": conv.people[1 - first]}
        slots: dict[str, str | list[str]] = {"A": names["A"], "B": names["B"], **conv.slots}
        if topics:
            slots["topic"] = rng.choice(topics)  # one topic for the whole exchange
        beat = [Turn(names[role], _capitalised(_fill_slots(text, slots, rng))) for role, text in exchange]
        session.beats.insert(rng.randint(0, len(session.beats)), beat)
        total += len(beat)


def _topics(conv: Conversation) -> list[tuple[str, date | None]]:
    """The conversation's topics, each with the day from which it may come up (``topic@YYYY-MM-DD``)."""
    out: list[tuple[str, date | None]] = []
    for item in conv.slots.get("topic", []):
        name, _, since = item.partition("@")
        out.append((name.strip(), date.fromisoformat(since) if since else None))
    return out


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def conversation_records(index: int, conv: Conversation) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    group = f"conv{index:02d}-{conv.name}"
    memories: list[dict[str, Any]] = []
    keys: dict[str, str] = {}
    for s_no, session in enumerate(conv.sessions, start=1):
        turns = [t for beat in session.beats for t in beat]
        for t_no, turn in enumerate(turns, start=1):
            key = f"{group}.s{s_no:02d}.t{t_no:02d}"
            if turn.key:
                if turn.key in keys:
                    raise SourceError(f"{conv.name}: tag @{turn.key} is used twice")
                keys[turn.key] = key
            memories.append({"key": key, "source": "conversation", "group": group, "split": conv.split,
                             "project": group, "session": s_no, "turn": t_no, "date": session.day.isoformat(),
                             "speaker": turn.speaker, "text": f"{turn.speaker}: {turn.text}",
                             "tag": turn.key})
    questions = []
    for q_no, q in enumerate(conv.questions, start=1):
        missing = [g for g in q.gold if g not in keys]
        if missing:
            raise SourceError(f"{q.where}: no turn tagged {missing}")
        questions.append({"id": f"{group}.q{q_no:02d}", "kind": q.kind, "question": q.text,
                          "project": group, "group": group, "split": conv.split,
                          "gold": [keys[g] for g in q.gold]})
    return memories, questions


# -- AI chats, notes and page facts -------------------------------------------------------------

def _read_blocks(path: Path) -> list[tuple[dict[str, str], list[tuple[str, str, str]]]]:
    """Blocks that start with a ``group:``/``chat:`` header line of ``k: v | k: v`` pairs."""
    blocks: list[tuple[dict[str, str], list[tuple[str, str, str]]]] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name}:{n}"
        if line.startswith(("group:", "chat:")):
            header = {}
            for part in line.split(" | "):
                k, _, v = part.partition(":")
                header[k.strip()] = v.strip()
            blocks.append((header, []))
            continue
        if not blocks:
            raise SourceError(f"{where}: content before the first header")
        if line.startswith("  ") and blocks[-1][1]:
            kind, text, w = blocks[-1][1][-1]
            blocks[-1][1][-1] = (kind, text + "\n" + line.strip(), w)
            continue
        if line.startswith("?"):
            blocks[-1][1].append(("?", line[1:].strip(), where))
            continue
        kind, _, text = line.partition(":")
        blocks[-1][1].append((kind.strip(), text.strip(), where))
    return blocks


def _question(line: str, where: str) -> tuple[str, list[str], str]:
    m = _QUESTION.match("? " + line)
    if not m or m.group(1) not in KINDS:
        raise SourceError(f"{where}: bad question line {line!r}")
    return m.group(1), m.group(2).split(","), m.group(3).strip()


def chat_records(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    chats: list[dict[str, Any]] = []
    for c_no, (header, lines) in enumerate(_read_blocks(path), start=1):
        group = f"chat{c_no:02d}-{header['chat']}"
        start = date.fromisoformat(header["date"])
        keys: dict[str, str] = {}
        messages = []
        qs = []
        turns: dict[str, str] = {}  # a tagged sentence's memory key → the key of the message holding it
        for m_no, (role, text, where) in enumerate(lines, start=1):
            if role == "?":
                qs.append((*_question(text, where), where))
                continue
            if role not in ("user", "assistant"):
                raise SourceError(f"{where}: expected user:, assistant: or ?:, not {role!r}")
            tagged: dict[str, str] = {}
            clean_lines = []
            for ln in text.split("\n"):
                tag = _TAG.search(ln)
                if tag:
                    ln = _TAG.sub("", ln)
                    tagged[tag.group(1)] = ln
                clean_lines.append(ln)
            body = " ".join(clean_lines)
            messages.append({"role": role, "text": body})
            if role != "user":
                if tagged:
                    raise SourceError(f"{where}: only the user's sentences are stored; an assistant tag is never gold")
                continue
            memories.append({"key": f"{group}.m{m_no:02d}", "source": "chat_turn", "group": group,
                             "split": header["split"], "project": None, "date": start.isoformat(), "text": body})
            turn_of: dict[str, str] = {}
            bullets = [b.text for b in extract_bullets(body)]
            for b_no, bullet in enumerate(bullets, start=1):
                key = f"{group}.m{m_no:02d}.b{b_no}"
                tag_of = next((t for t, s in tagged.items() if _same(s, bullet)), None)
                if tag_of:
                    keys[tag_of] = key
                    turn_of[key] = f"{group}.m{m_no:02d}"
                memories.append({"key": key, "source": "chat", "group": group, "split": header["split"],
                                 "project": None, "date": start.isoformat(), "text": bullet, "tag": tag_of})
            lost = [t for t in tagged if t not in keys]
            if lost:
                raise SourceError(f"{where}: the importer's extraction drops the sentence tagged {lost}")
            turns.update(turn_of)
        chats.append({"group": group, "title": header.get("title"), "date": start.isoformat(), "messages": messages})
        for q_no, (kind, gold, text, where) in enumerate(qs, start=1):
            if any(g not in keys for g in gold):
                raise SourceError(f"{where}: unknown tag in {gold}")
            questions.append({"id": f"{group}.q{q_no:02d}", "kind": kind, "question": text,
                              "project": header.get("project") or None, "group": group,
                              "split": header["split"],
                              "gold": [k for g in gold for k in (keys[g], turns[keys[g]])]})
    return memories, questions, chats


def _same(sentence: str, bullet: str) -> bool:
    """The tagged sentence is this memory: the same words, or the memory is its statement with a lead-in or
    a request cut off, or its first clause when a run-on sentence is split."""
    norm = [" ".join(re.findall(r"\w+", s.casefold())) for s in (sentence, bullet)]
    return norm[0] == norm[1] or norm[0].endswith(norm[1]) or norm[0].startswith(norm[1])


def note_records(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for g_no, (header, lines) in enumerate(_read_blocks(path), start=1):
        group = f"notes{g_no:02d}-{header['group']}"
        project = header.get("project") or None
        keys: dict[str, str] = {}
        url = title = None
        qs = []
        for n_no, (kind, text, where) in enumerate(lines, start=1):
            if kind == "?":
                qs.append((*_question(text, where), where))
                continue
            if kind == "page":
                url, _, title = (p.strip() for p in text.partition(" | "))
                continue
            if kind not in ("n", "p"):
                raise SourceError(f"{where}: expected n:, page:, p: or ?:, not {kind!r}")
            if kind == "p" and not url:
                raise SourceError(f"{where}: a page fact needs a page: line before it")
            tag = _TAG.search(text)
            key = f"{group}.{kind}{n_no:03d}"
            if tag:
                keys[tag.group(1)] = key
            rec: dict[str, Any] = {"key": key, "source": "page" if kind == "p" else "note", "group": group,
                                   "split": header["split"], "project": project,
                                   "text": _TAG.sub("", text), "tag": tag.group(1) if tag else None}
            if kind == "p":
                rec.update(url=url, title=title)
            memories.append(rec)
        for q_no, (kind, gold, text, where) in enumerate(qs, start=1):
            if any(g not in keys for g in gold):
                raise SourceError(f"{where}: unknown tag in {gold}")
            questions.append({"id": f"{group}.q{q_no:02d}", "kind": kind, "question": text, "project": project,
                              "group": group, "split": header["split"], "gold": [keys[g] for g in gold]})
    return memories, questions


# -- all together -------------------------------------------------------------------------------

def build(src: Path = SRC, seed: int = SEED) -> dict[str, Any]:
    rng = random.Random(seed)
    filler = parse_filler(src / "filler.txt")
    topical = parse_filler(src / "topical.txt")
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for index, path in enumerate(sorted((src / "conversations").glob("*.txt")), start=1):
        conv = parse_conversation(path)
        pad(conv, filler, topical, rng)
        m, q = conversation_records(index, conv)
        memories += m
        questions += q
    chats: list[dict[str, Any]] = []
    if (src / "chats.txt").exists():
        m, q, chats = chat_records(src / "chats.txt")
        memories += m
        questions += q
    if (src / "notes.txt").exists():
        m, q = note_records(src / "notes.txt")
        memories += m
        questions += q
    for rec in memories + questions:
        if rec["split"] not in ("dev", "test"):
            raise SourceError(f"{rec.get('key') or rec.get('id')}: split must be dev or test")
    return {"memories": memories, "questions": questions, "chats": chats}


def summary(data: dict[str, Any]) -> str:
    lines = []
    for split in ("dev", "test"):
        mem = [m for m in data["memories"] if m["split"] == split]
        qs = [q for q in data["questions"] if q["split"] == split]
        by_kind = ", ".join(f"{k} {sum(q['kind'] == k for q in qs)}" for k in KINDS)
        by_source = ", ".join(f"{s} {sum(m['source'] == s for m in mem)}"
                              for s in ("conversation", "chat", "note", "page"))
        lines.append(f"{split}: {len(qs)} questions ({by_kind}); {len(mem)} memories ({by_source})")
    lines.append(f"all: {len(data['questions'])} questions over {len(data['memories'])} memories")
    return "\n".join(lines)


def write(data: dict[str, Any], out: Path = DATA) -> None:
    for name in ("memories", "questions"):
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for rec in data[name]:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    (out / "chats.json").write_text(json.dumps(data["chats"], ensure_ascii=False, indent=1) + "\n",
                                    encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality_data", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="parse and summarise without writing")
    args = parser.parse_args(argv)
    try:
        data = build()
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.check:
        write(data)
    print(summary(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
