"""How the backfill feeds the model: batches of like length, and a burst of writes embedded together."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import numpy as np
import pytest

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search import backfill as bf
from vodou_desktop.search.embedder import Embedder, EmbedderState
from vodou_desktop.vault import Vault
from vodou_desktop.vault import query as q


class Recording:
    """The real model, with a record of the texts of each ``encode`` call."""

    def __init__(self, model: Embedder) -> None:
        self._model = model
        self.calls: list[list[str]] = []

    @property
    def ready(self) -> bool:
        return self._model.ready

    @property
    def model_id(self) -> str:
        return self._model.model_id

    def on_state(self, listener: Callable[[EmbedderState], None]) -> None:
        self._model.on_state(listener)

    def submit(self, texts: Sequence[str], batch_size: int = 64) -> Future[np.ndarray]:
        self.calls.append(list(texts))
        return self._model.submit(texts, batch_size=batch_size)


def _wait(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    done = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return True
        done.wait(0.05)
    return False


TEXTS = ["short note on tea",
         "a much longer note about the way the greenhouse vents are opened on warm afternoons in May",
         "the bike lock code",
         "the piano tuner comes back every spring and charges by the hour for the work",
         "mid-sized note about the compost heap",
         "the allotment gate key hangs behind the kitchen door on the left hook",
         "wifi password is on the fridge"]


def test_backfill_embeds_in_batches_of_like_length(vault: Vault, model: Embedder) -> None:
    for text in TEXTS:
        remember(vault, text, Origin(kind="cli"))
    rec = Recording(model)
    assert bf.backfill(vault, rec, batch=3) == len(TEXTS)  # type: ignore[arg-type]
    assert vault.read(q.count_unembedded) == 0
    lengths = [[len(t) for t in call] for call in rec.calls]
    assert [len(c) for c in lengths] == [3, 3, 1]
    flat = [n for call in lengths for n in call]
    assert flat == sorted(flat, reverse=True)  # the longest first, so each batch pads little
    assert sorted(t for call in rec.calls for t in call) == sorted(TEXTS)


def test_the_model_embeds_the_next_batch_while_the_one_before_is_stored(vault: Vault, model: Embedder) -> None:
    for text in TEXTS:
        remember(vault, text, Origin(kind="cli"))
    rec = Recording(model)
    handed_when_stored: list[int] = []
    bf.backfill(vault, rec, batch=3, embedded=lambda ids: handed_when_stored.append(len(rec.calls)))  # type: ignore[arg-type]
    assert handed_when_stored == [2, 3, 3]  # batch 2 was with the model while batch 1 was stored
    assert vault.read(q.count_unembedded) == 0


def test_backfill_cancelled_inside_a_window_leaves_the_rest_for_later(vault: Vault, model: Embedder) -> None:
    for text in TEXTS:
        remember(vault, text, Origin(kind="cli"))
    cancel = threading.Event()
    rec = Recording(model)
    done = bf.backfill(vault, rec, batch=2, cancel=cancel,  # type: ignore[arg-type]
                       progress=lambda d, t: cancel.set() if d >= 2 else None)
    assert done == 2 and vault.read(q.count_unembedded) == len(TEXTS) - 2
    assert bf.backfill(vault, rec, batch=2) == len(TEXTS) - 2  # type: ignore[arg-type]
    assert vault.read(q.count_unembedded) == 0


def test_backfiller_waits_for_a_burst_of_writes_to_pause(vault: Vault, model: Embedder,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Facts written one at a time, closer together than the settle time, go to the model in one
    call — also when the burst lasts longer than the settle time itself."""
    monkeypatch.setattr(bf, "SETTLE_S", 0.6)
    monkeypatch.setattr(bf, "MAX_SETTLE_S", 30.0, raising=False)
    rec = Recording(model)
    filler = bf.Backfiller(vault, rec).start()  # type: ignore[arg-type]
    try:
        assert filler.idle.wait(30)
        pause = threading.Event()
        for text in TEXTS:  # ~0.1 s apart: the burst lasts ~0.7 s, longer than the settle time
            remember(vault, text, Origin(kind="cli"))
            pause.wait(0.1)
        assert _wait(lambda: vault.read(q.count_unembedded) == 0)
    finally:
        filler.stop()
    assert [sorted(call) for call in rec.calls] == [sorted(TEXTS)]


def test_backfiller_does_not_wait_past_the_longest_settle(vault: Vault, model: Embedder,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A steady stream of writes never pauses: its first facts are embedded while it goes on."""
    monkeypatch.setattr(bf, "SETTLE_S", 0.5)
    monkeypatch.setattr(bf, "MAX_SETTLE_S", 0.5)
    rec = Recording(model)
    filler = bf.Backfiller(vault, rec).start()  # type: ignore[arg-type]
    try:
        assert filler.idle.wait(30)
        remember(vault, "the first fact of a long stream", Origin(kind="cli"))
        pause = threading.Event()
        i = 0
        while not rec.calls and i < 600:  # at most a minute of writes, 0.1 s apart
            remember(vault, f"stream fact number {i} about the garden", Origin(kind="cli"))
            pause.wait(0.1)
            i += 1
        assert rec.calls, "nothing was embedded while the stream went on"
    finally:
        filler.stop()


def test_backfiller_starts_once_enough_chunks_wait(vault: Vault, model: Embedder,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With a window's worth waiting the model starts, though writes go on and the settle is long."""
    monkeypatch.setattr(bf, "SETTLE_S", 30.0)
    monkeypatch.setattr(bf, "MAX_SETTLE_S", 60.0)
    monkeypatch.setattr(bf, "SETTLE_ENOUGH", 3, raising=False)
    rec = Recording(model)
    filler = bf.Backfiller(vault, rec).start()  # type: ignore[arg-type]
    try:
        pause = threading.Event()
        i = 0
        while not rec.calls and i < 150:  # at most ~15 s of writes, 0.1 s apart: half the settle
            remember(vault, f"stream fact number {i} about the garden", Origin(kind="cli"))
            pause.wait(0.1)
            i += 1
        assert rec.calls, "nothing was embedded though enough chunks waited"
        assert len(rec.calls[0]) >= 3
    finally:
        filler.stop()
