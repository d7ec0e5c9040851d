"""Embedder states, fallback to keywords, backfill of chunks written before the model was ready."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import pytest

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.backfill import Backfiller, backfill
from vodou_desktop.search.embedder import Embedder, EmbedderState
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import FactFilter, Vault
from vodou_desktop.vault import query as q


def test_off_by_choice_is_off_and_search_uses_keywords(keyword_search: SearchService) -> None:
    assert keyword_search.embedder is not None
    assert keyword_search.embedder.state is EmbedderState.OFF
    fid = remember(keyword_search.vault, "the greenhouse vents open at 24 degrees", Origin(kind="cli"))
    results = keyword_search.search("greenhouse vents", FactFilter())
    assert [r.fact.id for r in results] == [fid] and results[0].factors["path"] == "keyword"


def test_failed_load_falls_back_with_one_clear_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    broken = tmp_path / "not-a-model"
    broken.mkdir()
    (broken / "config.json").write_text("{ this is not json")
    with caplog.at_level(logging.WARNING, logger="vodou_desktop.search.embedder"):
        embedder = Embedder(str(broken)).start()
        assert embedder.wait(120) is EmbedderState.FAILED
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "keywords only" in lines[0]
    with pytest.raises(RuntimeError):
        embedder.encode(["x"])


def test_chunks_written_before_ready_are_found_by_keyword_then_embedded(vault: Vault, model: Embedder) -> None:
    fid = remember(vault, "the compost needs turning every fortnight", Origin(kind="cli"))
    index = VectorIndex(vault)
    index.load()
    assert len(index) == 0
    early = SearchService(vault, Embedder("none"), index)
    assert [r.fact.id for r in early.search("compost turning", FactFilter())] == [fid]
    seen: list[tuple[int, int]] = []
    assert backfill(vault, model, progress=lambda d, t: seen.append((d, t))) == 1
    assert seen[-1] == (1, 1)
    assert vault.read(q.count_unembedded) == 0
    assert len(index) == 1  # the index followed the vault's change event
    late = SearchService(vault, model, index)
    hit = late.search("how often should the garden waste heap be mixed", FactFilter())
    assert hit and hit[0].fact.id == fid
    index.close()


def test_backfill_cancels_promptly(vault: Vault, model: Embedder) -> None:
    for i in range(300):
        remember(vault, f"note {i} about the allotment", Origin(kind="cli"))
    cancel = threading.Event()
    done = backfill(vault, model, batch=32, progress=lambda d, t: cancel.set() if d >= 32 else None, cancel=cancel)
    assert done == 32 and vault.read(q.count_unembedded) == 268


def test_backfiller_thread_embeds_new_chunks(vault: Vault, model: Embedder) -> None:
    filler = Backfiller(vault, model).start()
    try:
        remember(vault, "the tandem bike needs new brake pads", Origin(kind="cli"))
        for _ in range(200):
            if vault.read(q.count_unembedded) == 0:
                break
            threading.Event().wait(0.05)
        assert vault.read(q.count_unembedded) == 0
    finally:
        filler.stop()


def test_vector_index_drops_deleted_chunks(vault: Vault, model: Embedder) -> None:
    fid = remember(vault, "the attic has a wasp nest", Origin(kind="cli"))
    backfill(vault, model)
    index = VectorIndex(vault)
    index.load()
    assert [i for i, _ in index.top(model.encode_one("wasp nest"), 5)] == [fid]

    def erase(conn, change):  # type: ignore[no-untyped-def]
        conn.execute("DELETE FROM chunks WHERE id = ?", (fid,))
        change.touch("chunks", chunk_ids=[fid])

    vault.write(erase)
    assert index.top(np.asarray(model.encode_one("wasp nest")), 5) == []
    index.close()
