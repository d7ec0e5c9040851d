"""A query's vector through ONNX Runtime (search/onnx_path.py): the same vectors as the library's
own ``encode``, a graph exported once per model and cached, and every way it can go wrong leaving
queries on torch with the right vectors (never a wrong vector, never a failed load).

Each Embedder here loads the real model; the graph is exported for real and run by the real
ONNX Runtime."""

from __future__ import annotations

import copy
import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from vodou_desktop.search import onnx_path
from vodou_desktop.search.embedder import DIRECT_TOLERANCE, Embedder, EmbedderState

pytestmark = pytest.mark.model
TEXTS = ["where is the spare key", "Herons nest in colonies!", "ünïcödé — an emoji 🐦 and a date 2023-05-07",
         "x", "word " * 600]


def loaded(cache: Path) -> Embedder:
    embedder = Embedder("default", cache_dir=cache).start()
    assert embedder.wait(300) is EmbedderState.READY, embedder.error
    return embedder


def reference(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return embedder._submit(lambda: embedder._reference(texts)).result()


def seeded(cache: Path, model: Embedder) -> Path:
    """A cache folder holding a copy of the session model's graph (saves an export)."""
    [graph] = graphs(model._cache_dir)
    (cache / "models").mkdir(parents=True)
    shutil.copyfile(graph, cache / "models" / graph.name)
    return cache / "models" / graph.name


def graphs(cache: Path) -> list[Path]:
    folder = cache / "models"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_queries_run_on_onnx_runtime_with_the_vectors_encode_gives(model: Embedder) -> None:
    assert model.query_path == "onnx"
    model.clear_query_cache()
    singles = np.stack([model.encode_one(t) for t in TEXTS])
    assert np.abs(singles - reference(model, TEXTS)).max() <= DIRECT_TOLERANCE
    assert model._query_thread is not None and model._query_thread.ident in model.encode_threads
    assert model.encode_threads <= model.own_threads


def test_a_query_does_not_wait_behind_a_batch(model: Embedder) -> None:
    """Queries on ONNX Runtime have a thread of their own: a search during a long backfill gets its
    vector while the batch is still being embedded, not after it."""
    model.clear_query_cache()
    texts = [f"a batch sentence number {i} about the garden shed and the bicycles kept in it" for i in range(1_500)]
    batch = model.submit(texts, batch_size=32)
    query = model.submit_one("where are the bicycles kept")
    vector = query.result(60)
    assert not batch.done(), "the query waited for the batch"
    assert np.allclose(vector, reference(model, ["where are the bicycles kept"])[0], atol=DIRECT_TOLERANCE)
    assert batch.result(600).shape == (len(texts), model.dim)
    assert model.encode_threads <= model.own_threads


def test_the_graph_is_exported_once_in_a_child_process_and_reused_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tracing holds a few hundred MB for a moment; a long-running process would keep them, so the
    export runs in a child (here this process cannot export at all, and the graph still comes)."""
    import tempfile

    import torch

    def not_here(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("exported in the app's own process")

    def no_temp_folder(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("the graph went through a temp folder (left behind if this process is killed)")

    temp = tmp_path / "temp"  # the child's temp folder
    temp.mkdir()
    with monkeypatch.context() as patch:
        patch.setattr(torch.onnx, "export", not_here)
        patch.setattr(tempfile, "mkdtemp", no_temp_folder)
        patch.setenv("TMPDIR", str(temp))
        first = loaded(tmp_path)
    assert first.query_path == "onnx"
    [graph] = graphs(tmp_path)  # written by the child straight into the cache under a partial name
    assert not [p for p in temp.rglob("*") if "onnx" in p.name.lower() and p.is_file() and p.stat().st_size > 1e6]
    assert graph.name.startswith("all-MiniLM-L6-v2.") and graph.suffix == ".onnx"
    written = graph.stat().st_mtime_ns

    def no_export(*_args: object) -> None:
        raise AssertionError("exported again although the cached graph fits")

    monkeypatch.setattr(onnx_path, "export_in_child", no_export)
    second = loaded(tmp_path)
    assert second.query_path == "onnx"
    assert graphs(tmp_path) == [graph] and graph.stat().st_mtime_ns == written
    assert np.abs(second.encode_one(TEXTS[1]) - reference(second, [TEXTS[1]])[0]).max() <= DIRECT_TOLERANCE


def test_an_unreadable_cached_graph_is_exported_again(tmp_path: Path, model: Embedder) -> None:
    graph = seeded(tmp_path, model)
    graph.write_bytes(b"not an onnx graph at all")
    again = loaded(tmp_path)
    assert again.query_path == "onnx"
    assert graph.stat().st_size > 1_000_000
    assert np.abs(again.encode_one(TEXTS[0]) - reference(again, [TEXTS[0]])[0]).max() <= DIRECT_TOLERANCE


def test_a_cached_graph_giving_other_vectors_is_discarded_and_replaced(tmp_path: Path, model: Embedder) -> None:
    """A graph that loads but computes something else (here: the same model with one layer's
    weights changed) is never used: it fails the check against encode and is exported again."""
    import torch

    graph = seeded(tmp_path, model)
    first = model._model[0]
    altered = copy.deepcopy(first.auto_model)
    with torch.no_grad():
        altered.encoder.layer[0].output.dense.weight.mul_(1.5)
    graph.write_bytes(onnx_path.export(altered, first.tokenizer))
    words = onnx_path.word_table(first.auto_model)
    wrong = onnx_path.OnnxQueryModel(first.tokenizer, 256, graph, words)(["where is the spare key"])
    assert np.abs(wrong - reference(model, ["where is the spare key"])).max() > 1e-3  # it does differ
    again = loaded(tmp_path)
    assert again.query_path == "onnx"
    assert np.abs(again.encode_one(TEXTS[0]) - reference(again, [TEXTS[0]])[0]).max() <= DIRECT_TOLERANCE
    assert np.abs(onnx_path.OnnxQueryModel(first.tokenizer, 256, graph, words)(["where is the spare key"])
                  - reference(model, ["where is the spare key"])).max() <= DIRECT_TOLERANCE


@pytest.mark.parametrize("failure", ["no runtime", "export fails"])
def test_without_a_graph_queries_stay_on_torch_with_the_same_vectors(
        failure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    if failure == "no runtime":
        monkeypatch.setattr(onnx_path, "available", lambda: False)
    else:
        def broken(*_args: object) -> None:
            raise RuntimeError("exporter broke")

        monkeypatch.setattr(onnx_path, "export_in_child", broken)
    with caplog.at_level(logging.INFO, logger="vodou_desktop.search.embedder"):
        embedder = loaded(tmp_path)
    assert embedder.query_path == "direct"
    assert "queries run on torch" in caplog.text
    assert graphs(tmp_path) == []
    singles = np.stack([embedder.encode_one(t) for t in TEXTS])
    assert np.abs(singles - reference(embedder, TEXTS)).max() <= DIRECT_TOLERANCE


def test_a_cache_that_cannot_be_written_still_gives_the_fast_path(tmp_path: Path) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder would go")
    embedder = loaded(blocked)
    assert embedder.query_path == "onnx"
    assert blocked.read_text() == "a file where the cache folder would go"


# -- the cache folder itself (no model needed) ------------------------------------------------

def test_writing_a_graph_replaces_this_models_older_ones_and_only_those(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    old = folder / "m.1234@aaaa.onnx"
    other = folder / "m.1234-other@bbbb.onnx"  # another model whose name starts the same
    fresh_partial = folder / "m.1234@cccc.onnx.part-99999"  # another process writing right now
    stale_partial = folder / "m.1234@dddd.onnx.part-99998"  # left by a process that died
    for p in (old, other, fresh_partial, stale_partial):
        p.write_bytes(b"x")
    long_ago = time.time() - onnx_path.STALE_PARTIAL_S - 60
    os.utime(stale_partial, (long_ago, long_ago))
    partial = onnx_path._partial_for(folder / "m.1234@eeee.onnx")  # where this process's child writes it
    assert partial is not None and partial.name.startswith(f"m.1234@eeee.onnx.part-{os.getpid()}-")
    assert sorted(p.name for p in folder.iterdir()) == sorted([partial.name, other.name, fresh_partial.name])
    second = onnx_path._partial_for(folder / "m.1234@eeee.onnx")  # another export meanwhile (a fresh partial)
    assert second is not None and second != partial and partial.exists()
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would go")
    assert onnx_path._partial_for(blocked / "models" / "m.1234@eeee.onnx") is None


def test_the_fingerprint_follows_the_model_files(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "1_Pooling" / "config.json").write_text('{"mean": true}')
    before = onnx_path.fingerprint(folder)
    assert onnx_path.fingerprint(folder) == before
    (folder / "1_Pooling" / "config.json").write_text('{"mean": false}')
    assert onnx_path.fingerprint(folder) != before


@pytest.mark.parametrize(("long_running", "path"), [(False, "direct"), (True, "onnx")])
def test_only_long_running_processes_prepare_the_onnx_path(long_running: bool, path: str, tmp_path: Path) -> None:
    """The app, `vodou serve` and the MCP server open their runtime for the long run and embed many
    queries; a one-shot command embeds one at most and does not pay the graph's setup."""
    from vodou_desktop.runtime import Runtime

    with Runtime.open(tmp_path / "vault.sqlite", background_backfill=long_running) as rt:
        assert rt.embedder.wait(300) is EmbedderState.READY, rt.embedder.error
        assert rt.embedder.query_path == path


def test_an_export_that_fails_in_the_child_says_why(tmp_path: Path) -> None:
    (tmp_path / "not-a-model").mkdir()
    out = tmp_path / "graph.onnx.part-1"
    out.touch()
    with pytest.raises(RuntimeError, match=r"the ONNX export failed \(exit code 1: .+\)"):
        onnx_path.export_in_child(tmp_path / "not-a-model", out)
    assert not out.exists()  # nothing half-written is left where the graph would have gone
