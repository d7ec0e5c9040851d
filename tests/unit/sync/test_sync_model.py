"""Sync against one computer, as a model-based (Hypothesis stateful) test.

2 to 4 computers, one of them perhaps joining late, make random changes — new memories, corrections, moves,
forgets and undos (of their own forgets or another computer's), erases, pins — take backups and restore
them, compact, and run sync while a stand-in engine delivers random shares of the files in random orders
and loses some copies on the way. Each change is recorded as it was made, in the order made (every one at
its own millisecond: the order of their clock stamps), by the global ids of the memories it touched.

After everything is delivered, every computer shows exactly what one computer applying the same changes
in that order shows, by the merge rules of docs/sync.md: a memory is shown while no active forget covers it
or its earlier revision; undo ends exactly its own forget; the last pin, the last correction of a memory
win; an erase takes the whole lineage; a change made after a backup and not sent before that backup was
restored never happened. And no byte of an erased memory is left in any vault, WAL, backup, copy from
before a restore, or file of any folder copy.

The suite runs a few examples (``SYNC_MODEL_EXAMPLES``, default 5); a longer run by hand:
``SYNC_MODEL_EXAMPLES=300 pytest tests/unit/sync/test_sync_model.py``.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as hs
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from tests.unit.sync.support import (
    SECRET,
    Device,
    connect,
    make_devices,
    plaintexts,
    restore,
    settle,
    shuttle,
    vault_bytes,
)
from vodou_desktop.data.backup import backup_vault
from vodou_desktop.errors import KnownError
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.ingest.remember import Origin, correct, move, pin, remember

PROJECTS = ("garden", "work", None)
EXAMPLES = int(os.environ.get("SYNC_MODEL_EXAMPLES", "5"))


# -- the model: one computer applying the changes in the order they were made ----------------------------

@dataclass
class Memory:
    text: str
    project: str | None
    pred: str | None
    pins: list[tuple[int, bool]]  # (order, pinned): the last wins


@dataclass
class Model:
    memories: dict[str, Memory] = field(default_factory=dict)
    supersede: dict[str, list[tuple[int, str | None]]] = field(default_factory=dict)  # memory -> (order, successor)
    covers: dict[str, set[str]] = field(default_factory=dict)  # forget operation -> memories it hid
    undone: set[str] = field(default_factory=set)
    erased: set[str] = field(default_factory=set)  # memories an erase named

    def lineage(self, key: str) -> set[str]:
        found, frontier = set(), {key}
        while frontier:
            found |= frontier
            frontier = {k for k, m in self.memories.items() if m.pred in found or k in
                        {self.memories[f].pred for f in found if f in self.memories}} - found - {None}
        return found

    def gone(self) -> set[str]:
        out: set[str] = set()
        for key in self.erased:
            out |= self.lineage(key)
        return out

    def _hidden(self, key: str) -> bool:
        while key is not None:
            if any(key in hid for op, hid in self.covers.items() if op not in self.undone):
                return True
            key = self.memories[key].pred  # a forget hides the revisions made concurrently with it
        return False

    def _winner(self, key: str) -> str | None:
        changes = self.supersede.get(key, [])
        return max(changes)[1] if changes else None

    def visible(self) -> set[tuple[str, str | None, bool]]:
        gone = self.gone()
        out = set()
        for key, m in self.memories.items():
            if key in gone or self._hidden(key) or self._winner(key) is not None:
                continue
            if m.pred is not None:  # two revisions of one memory: the last correction of it shows
                siblings = [k for k, o in self.memories.items() if o.pred == m.pred]
                if len(siblings) > 1 and self._winner(m.pred) in siblings and self._winner(m.pred) != key:
                    continue
            out.add((m.text, m.project, max(m.pins)[1]))
        return out


@dataclass
class Backup:
    path: Path
    journal: list[tuple[int, str, tuple[object, ...]]]  # what the backup's vault had still to send
    keys: set[str]  # the memories it holds


class SyncAgainstOneComputer(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.home = os.environ.get("VODOU_HOME")
        os.environ["VODOU_HOME"] = str(Path(self.tmp.name) / "home")  # this example's backups folder
        self.backups_dir = Path(self.tmp.name) / "home" / "data" / "backups"
        self.backups_dir.mkdir(parents=True)
        self.devices: list[Device] = []
        self.joined: list[Device] = []
        self.model = Model()
        self.order = 0
        self.journal: dict[str, list[tuple[int, str, tuple[object, ...]]]] = {}  # changes not sent yet
        self.sent: list[tuple[int, str, tuple[object, ...]]] = []  # changes some run has sent
        self.backups: dict[str, list[Backup]] = {}
        self.rng = random.Random(0)
        self.canary = 0

    # -- set-up ---------------------------------------------------------------------------------------
    @initialize(count=hs.integers(2, 4), late=hs.booleans(), seed=hs.integers(0, 1000))
    def start(self, count: int, late: bool, seed: int) -> None:
        self.rng = random.Random(seed)
        self.devices = make_devices(Path(self.tmp.name), [f"d{n}" for n in range(count)])
        self.joined = self.devices[:-1] if late else self.devices[:]
        connect(self.joined, self.rng)
        for d in self.devices:
            self.journal[d.name] = []
            self.backups[d.name] = []

    @precondition(lambda self: len(self.joined) < len(self.devices))
    @rule()
    def join_late(self) -> None:
        joiner = self.devices[len(self.joined)]
        shuttle(self.devices, self.rng, share=1.0)
        joiner.engine.setup(joiner.folder, joiner.name, SECRET, joining=True)
        joiner.run()
        self.joined.append(joiner)

    # -- what a person does on one computer ------------------------------------------------------------
    def _device(self, who: int) -> Device:
        return self.joined[who % len(self.joined)]

    def _visible(self, device: Device) -> list[tuple[int, str]]:
        return device.vault.read(lambda c: [(int(r[0]), str(r[1])) for r in c.execute(
            "SELECT id, sync_id FROM chunks WHERE document_id IS NULL AND invalid_at IS NULL"
            " AND superseded_by IS NULL ORDER BY id")])

    def _key_of(self, device: Device, fact: int) -> str:
        return str(device.vault.read(lambda c: c.execute("SELECT sync_id FROM chunks WHERE id = ?",
                                                         (fact,)).fetchone()[0]))

    def _record(self, device: Device, kind: str, *data: object) -> None:
        """A change this computer made: applied to the model (in the order made), kept until it is sent."""
        self.order += 1
        self._apply(self.order, kind, data)
        self.journal[device.name].append((self.order, kind, data))
        time.sleep(0.002)  # every change at a millisecond of its own: the order of their stamps

    def _apply(self, order: int, kind: str, data: tuple[object, ...]) -> None:
        m = self.model
        if kind == "create":
            key, text, project, pred, pinned = data
            m.memories[str(key)] = Memory(str(text), project, pred, [(order, bool(pinned))])  # type: ignore[arg-type]
            if pred is not None:
                m.supersede.setdefault(str(pred), []).append((order, str(key)))
        elif kind == "forget":
            op, key = data
            m.covers[str(op)] = {str(key)}
        elif kind == "undo":
            m.undone.add(str(data[0]))
        elif kind == "pin":
            key, pinned = data
            m.memories[str(key)].pins.append((order, bool(pinned)))
        elif kind == "erase":
            m.erased.add(str(data[0]))

    def _new_memory(self, device: Device, fact: int, pred: str | None) -> None:
        row = device.vault.read(lambda c: c.execute("SELECT sync_id, text, project_id, pinned_from IS NOT NULL"
                                                    " FROM chunks WHERE id = ?", (fact,)).fetchone())
        self._record(device, "create", row[0], row[1], row[2], pred, bool(row[3]))

    def _text(self, what: str) -> str:
        self.canary += 1
        return f"{what} CANARY-m{self.canary}q"

    @rule(who=hs.integers(0, 3), project=hs.sampled_from(PROJECTS))
    def add(self, who: int, project: str | None) -> None:
        device = self._device(who)
        fact = remember(device.vault, self._text("a memory"), Origin(kind="cli"), project=project)
        self._new_memory(device, fact, None)

    @rule(who=hs.integers(0, 3), pick=hs.integers(0, 50), project=hs.sampled_from(PROJECTS),
          how=hs.sampled_from(("correct", "move")))
    def revise(self, who: int, pick: int, project: str | None, how: str) -> None:
        device = self._device(who)
        facts = self._visible(device)
        if not facts:
            return
        fact, key = facts[pick % len(facts)]
        try:
            new = correct(device.vault, fact, self._text("corrected")) if how == "correct" else \
                move(device.vault, fact, project)
        except KnownError:
            return
        self._new_memory(device, new, key)

    @rule(who=hs.integers(0, 3), pick=hs.integers(0, 50))
    def forget(self, who: int, pick: int) -> None:
        device = self._device(who)
        facts = self._visible(device)
        if facts:
            fact, key = facts[pick % len(facts)]
            self._record(device, "forget", Forgetting(device.vault).forget_fact(fact)["op"], key)

    @rule(who=hs.integers(0, 3), pick=hs.integers(0, 50))
    def undo(self, who: int, pick: int) -> None:
        device = self._device(who)
        ops = device.vault.read(lambda c: [str(r[0]) for r in c.execute(
            "SELECT id FROM operations WHERE kind = 'forget_fact' AND undone_at IS NULL ORDER BY id")])
        if ops:
            op = ops[pick % len(ops)]  # its own forget or another computer's
            Forgetting(device.vault).undo(op)
            self._record(device, "undo", op)

    @rule(who=hs.integers(0, 3), pick=hs.integers(0, 50), pinned=hs.booleans())
    def pin(self, who: int, pick: int, pinned: bool) -> None:
        device = self._device(who)
        facts = self._visible(device)
        if facts:
            fact, key = facts[pick % len(facts)]
            if pin(device.vault, fact, pinned):
                self._record(device, "pin", key, pinned)

    @rule(who=hs.integers(0, 3), pick=hs.integers(0, 50))
    def erase(self, who: int, pick: int) -> None:
        device = self._device(who)
        facts = self._visible(device)
        if facts:
            fact, key = facts[pick % len(facts)]
            Forgetting(device.vault).erase_fact(fact)
            self._record(device, "erase", key)
            # an erase reaches this computer's backups too: the same erase runs in each that holds the memory,
            # so a backup restored later has it to send (on one computer a restore never brings it back)
            lineage = self.model.lineage(key)
            for kept in self.backups[device.name]:
                if kept.keys & lineage:
                    kept.journal.append(self.journal[device.name][-1])

    @rule(who=hs.integers(0, 3))
    def backup(self, who: int) -> None:
        device = self._device(who)
        dest = self.backups_dir / f"{device.vault.path.name}.backup-{self.order:06d}-{len(self.backups[device.name])}"
        backup_vault(device.vault.path, dest)
        keys = device.vault.read(lambda c: {str(r[0]) for r in c.execute("SELECT sync_id FROM chunks")})
        self.backups[device.name].append(Backup(dest, list(self.journal[device.name]), keys))

    @rule(who=hs.integers(0, 3), which=hs.integers(0, 5))
    def restore(self, who: int, which: int) -> None:
        device = self._device(who)
        made = self.backups[device.name]
        if not made:
            return
        chosen = made[which % len(made)]
        restore(device, chosen.path)
        # what the restored vault still has to send: its journal as the backup kept it; changes made here
        # since and not sent never happened
        self.journal[device.name] = list(chosen.journal)
        self._replay()

    def _replay(self) -> None:
        """The model again from every change that was or will be sent, in the order made."""
        kept = sorted({c for sent in (self.sent, *self.journal.values()) for c in sent})
        self.model = Model()
        for order, kind, data in kept:
            self._apply(order, kind, data)

    # -- sync --------------------------------------------------------------------------------------------
    @rule(who=hs.integers(0, 3), compact=hs.booleans())
    def run(self, who: int, compact: bool) -> None:
        device = self._device(who)
        report = device.engine.run(force_snapshot=compact)
        assert report.refused == [], report.refused
        self.sent.extend(self.journal[device.name])
        self.journal[device.name] = []

    @rule(share=hs.floats(0.05, 1.0))
    def deliver(self, share: float) -> None:
        shuttle(self.devices, self.rng, share=share)

    @rule(pick=hs.integers(0, 1000))
    def lose(self, pick: int) -> None:
        """A copy the engine lost on the way (it brings it again later)."""
        device = self.devices[pick % len(self.devices)]
        cfg = device.engine.config()
        own = set(cfg.own) if cfg else set()
        others = [p for p in (device.folder / "vodou").rglob("*.vsc") if p.parent.name not in own]
        if others:
            others[pick % len(others)].unlink()

    # -- the check -------------------------------------------------------------------------------------------
    def teardown(self) -> None:
        try:
            if self.devices:
                while len(self.joined) < len(self.devices):  # a computer that joins at the end
                    self.join_late()
                settle(self.devices, self.rng, rounds=60)
                self.sent.extend(c for j in self.journal.values() for c in j)
                self._replay()
                self._check()
        finally:
            for d in self.devices:
                d.vault.close()
            if self.home is None:
                os.environ.pop("VODOU_HOME", None)
            else:
                os.environ["VODOU_HOME"] = self.home
            self.tmp.cleanup()

    def _check(self) -> None:
        want = self.model.visible()
        for d in self.devices:
            shown = d.vault.read(lambda c: {(str(r[0]), r[1], bool(r[2])) for r in c.execute(
                "SELECT text, project_id, pinned_from IS NOT NULL FROM chunks WHERE document_id IS NULL"
                " AND invalid_at IS NULL AND superseded_by IS NULL")})
            assert shown == want, (d.name, sorted(shown - want), sorted(want - shown))
        canaries = [self.model.memories[k].text.split()[-1].encode() for k in self.model.gone()
                    if k in self.model.memories]
        if not canaries:
            return
        files: list[bytes] = []
        for d in self.devices:
            files.append(vault_bytes(d.vault))
            files += plaintexts(d.folder)
            files += [p.read_bytes() for p in d.vault.path.parent.glob(d.vault.path.name + ".before-*")]
        files += [p.read_bytes() for p in self.backups_dir.iterdir() if p.is_file()]
        for canary in canaries:
            assert not any(canary in data for data in files), canary


SyncAgainstOneComputer.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_sync_against_one_computer = SyncAgainstOneComputer.TestCase
