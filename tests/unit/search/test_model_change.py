"""The embedding model is one replaceable part (SEARCH-7): the width comes from the model, vectors
record their model, an index holds one model's vectors, and a model change re-embeds the vault so
that it never keeps two widths.

The second model is real: all-MiniLM-L6-v2 (from the installed package) followed by a Dense
projection to 256 dimensions, saved to a temp folder with sentence-transformers' own API.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search import embedder as embedder_module
from vodou_desktop.search.backfill import Backfiller, backfill, reembed
from vodou_desktop.search.embedder import DEFAULT_MODEL, Embedder, EmbedderState, minilm_model_dir
from vodou_desktop.search.service import SearchService
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import VECTORS_MODEL_SETTING, set_embeddings
from vodou_desktop.vault.settings_store import get_setting

pytestmark = pytest.mark.model
SECOND_DIM = 256
FACTS = [
    "the sourdough starter is fed every morning with rye flour",
    "Ana's flight to Lisbon leaves on the ninth of May",
    "the bike shop on Elm Street fixes tubeless tyres",
    "we chose Postgres over MySQL for the billing service",
    "my passport expires in March next year",
]


@pytest.fixture(scope="module")
def second_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    """A real, different sentence-transformers model with another width, built offline."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:  # where sentence-transformers 6 keeps the modules (its old path warns, and warnings are errors here)
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:  # releases before 6
        from sentence_transformers import models  # type: ignore[no-redef]

    torch.manual_seed(0)
    base = SentenceTransformer(str(minilm_model_dir()), device="cpu")
    # after the load, which imports the library's (deprecated) models package from inside the library
    from sentence_transformers import models

    dense = models.Dense(in_features=base.get_embedding_dimension(), out_features=SECOND_DIM,
                         activation_function=torch.nn.Identity())
    projected = SentenceTransformer(modules=[*base, dense, models.Normalize()], device="cpu")
    folder = tmp_path_factory.mktemp("models") / "minilm-projected-256"
    projected.save(str(folder))
    del base, projected
    second = Embedder(str(folder)).start()
    assert second.wait(300) is EmbedderState.READY, second.error
    yield second


def widths(vault: Vault) -> dict[int, int]:
    return vault.read(q.embedding_widths)


def wait_for(condition: object, seconds: float = 60.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():  # type: ignore[operator]
            return True
        threading.Event().wait(0.05)
    return bool(condition())  # type: ignore[operator]


def test_width_comes_from_the_loaded_model(model: Embedder, second_model: Embedder) -> None:
    assert model.dim == 384 and model.model_id == DEFAULT_MODEL
    assert second_model.dim == SECOND_DIM
    assert second_model.model_id == str(Path(second_model.choice).resolve())
    assert second_model.encode(["a sentence"]).shape == (1, SECOND_DIM)
    assert np.isclose(np.linalg.norm(second_model.encode_one("another sentence")), 1.0, atol=1e-4)


def test_vectors_record_their_model(vault: Vault, model: Embedder) -> None:
    ids = [remember(vault, text, Origin(kind="cli")) for text in FACTS[:2]]
    backfill(vault, model)
    rows = vault.read(lambda conn: conn.execute(
        "SELECT id, embed_model FROM chunks WHERE embedding IS NOT NULL ORDER BY id").fetchall())
    assert rows == [(ids[0], DEFAULT_MODEL), (ids[1], DEFAULT_MODEL)]


def test_an_index_loads_only_its_own_models_vectors(vault: Vault, model: Embedder, second_model: Embedder) -> None:
    ids = [remember(vault, text, Origin(kind="cli")) for text in FACTS]
    backfill(vault, model)
    # two chunks re-embedded by the second model, the other three still hold the first model's
    vault.write(lambda conn, change: set_embeddings(
        conn, change, zip(ids[:2], second_model.encode(FACTS[:2]), strict=True), model=second_model.model_id))
    old, new = VectorIndex(vault, model=model.model_id), VectorIndex(vault, model=second_model.model_id)
    try:
        assert old.load() == 3 and old.dim == 384
        assert new.load() == 2 and new.dim == SECOND_DIM
        assert {i for i, _ in new.top(second_model.encode_one("sourdough rye"), 10)} == set(ids[:2])
        assert new.top(model.encode_one("sourdough rye"), 10) == []  # a query of another width matches nothing
        # while the index follows the vault, a chunk re-embedded by the other model leaves it
        vault.write(lambda conn, change: set_embeddings(
            conn, change, [(ids[2], second_model.encode_one(FACTS[2]))], model=second_model.model_id))
        assert len(old) == 2 and len(new) == 3
    finally:
        old.close()
        new.close()


def test_a_model_change_reembeds_and_the_vault_never_keeps_two_widths(
        vault: Vault, model: Embedder, second_model: Embedder) -> None:
    ids = [remember(vault, text, Origin(kind="cli")) for text in FACTS]
    backfill(vault, model)
    assert reembed(vault, model) == 0  # nothing stale: the pass records the model
    assert vault.read(lambda c: get_setting(c, VECTORS_MODEL_SETTING)) == DEFAULT_MODEL
    assert widths(vault) == {384: len(FACTS)}

    index = VectorIndex(vault, model=second_model.model_id)
    index.load()
    search = SearchService(vault, second_model, index)
    try:
        assert len(index) == 0  # the old model's vectors are not loaded into the new model's index
        found = search.search("passport expires", FactFilter())
        assert found and found[0].fact.id == ids[4]
        assert all(r.factors["vector_cosine"] is None for r in found)  # no old-model vector was used

        # a cancelled pass leaves the vault part-way: the index holds only the new model's vectors
        cancel = threading.Event()
        seen: list[tuple[int, int]] = []

        def progress(done: int, total: int) -> None:
            seen.append((done, total))
            if done >= 2:
                cancel.set()

        assert reembed(vault, second_model, batch=2, progress=progress, cancel=cancel) == 2
        assert seen == [(0, 5), (2, 5)]
        assert widths(vault) == {384: 3, SECOND_DIM: 2}
        assert vault.read(lambda c: get_setting(c, VECTORS_MODEL_SETTING)) == ""
        assert len(index) == 2 and index.dim == SECOND_DIM

        assert reembed(vault, second_model, batch=2) == 3
        assert widths(vault) == {SECOND_DIM: len(FACTS)}
        assert vault.read(partial_count_stale(second_model.model_id)) == 0
        assert vault.read(lambda c: get_setting(c, VECTORS_MODEL_SETTING)) == second_model.model_id
        assert reembed(vault, second_model) == 0
        assert len(index) == len(FACTS)
        hit = search.search("when does Ana fly to Portugal", FactFilter())
        assert hit and hit[0].fact.id == ids[1] and hit[0].factors["path"] == "hybrid"
    finally:
        index.close()


def test_a_vector_written_by_another_model_is_replaced_by_the_next_pass(
        vault: Vault, model: Embedder, second_model: Embedder) -> None:
    for text in FACTS[:3]:
        remember(vault, text, Origin(kind="cli"))
    backfill(vault, second_model)
    reembed(vault, second_model)
    assert vault.read(lambda c: get_setting(c, VECTORS_MODEL_SETTING)) == second_model.model_id
    # another process (a CLI run with the old model) embeds a new chunk with its own model
    remember(vault, FACTS[3], Origin(kind="cli"))
    backfill(vault, model)
    assert widths(vault) == {SECOND_DIM: 3, 384: 1}
    assert vault.read(lambda c: get_setting(c, VECTORS_MODEL_SETTING)) == ""  # the record is cleared
    assert reembed(vault, second_model) == 1
    assert widths(vault) == {SECOND_DIM: 4}


def test_the_background_backfiller_reembeds_after_a_model_change(
        vault_path: Path, model: Embedder, second_model: Embedder) -> None:
    vault = Vault.open(vault_path)
    try:
        for text in FACTS:
            remember(vault, text, Origin(kind="cli"))
        backfill(vault, model)
    finally:
        vault.close()
    vault = Vault.open(vault_path)  # the app starts again with the other model chosen
    progress: list[tuple[int, int]] = []
    filler = Backfiller(vault, second_model, progress=lambda d, t: progress.append((d, t))).start()
    try:
        assert wait_for(lambda: widths(vault) == {SECOND_DIM: len(FACTS)})
        assert (len(FACTS), len(FACTS)) in progress
        remember(vault, "a new note after the change", Origin(kind="cli"))
        assert wait_for(lambda: widths(vault) == {SECOND_DIM: len(FACTS) + 1})
    finally:
        filler.stop()
        vault.close()


def test_query_vectors_come_from_a_bounded_cache(model: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_module, "QUERY_CACHE_SIZE", 3)
    first = model.encode_one("where is the spare key")
    assert model.encode_one("where is the spare key") is first  # the cache answered
    assert not first.flags.writeable
    assert np.allclose(first, model.encode(["where is the spare key"])[0], atol=1e-5)
    for i in range(10):
        model.encode_one(f"query number {i}")
    assert model.cached_queries == 3
    assert model.encode_one("where is the spare key") is not first  # evicted, encoded again


def partial_count_stale(model_id: str):  # type: ignore[no-untyped-def]
    return lambda conn: q.count_stale_embedded(conn, model_id)


def test_every_encode_runs_on_the_models_own_thread(model: Embedder) -> None:
    """Callers on many threads (the bridge's executor, the backfill) never run the model themselves:
    per-thread torch buffers and allocator arenas made a long-running server's memory grow."""
    results: list[np.ndarray] = []
    workers = [threading.Thread(target=lambda i=i: results.append(model.encode([f"thread {i} asks"])))
               for i in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    model.encode_one("and the test's own thread asks too")
    assert len(results) == 6 and all(r.shape == (1, 384) for r in results)
    assert model.encode_threads and model.encode_threads <= model.own_threads


QUERY_TEXTS = ["where is the spare key", "Herons nest in colonies!", "  padded   query  ",
               "ünïcödé — an emoji 🐦 and a date 2023-05-07", "x", "word " * 600]


def test_a_single_text_goes_straight_through_the_model_with_the_vectors_encode_gives(torch_model: Embedder) -> None:
    """On torch, queries skip SentenceTransformer.encode (its per-call work) on one thread; the vectors
    agree with encode's to 1e-5, truncation included, and batches still go through encode unchanged."""
    model = torch_model
    assert model.direct_path and model.runtime == "torch"
    reference = model._submit(lambda: model._model.encode(  # the library's own path, on the model thread
        QUERY_TEXTS, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)).result()
    singles = np.stack([model.encode([t])[0] for t in QUERY_TEXTS])
    assert np.abs(singles - reference).max() <= embedder_module.DIRECT_TOLERANCE
    assert np.array_equal(model.encode(QUERY_TEXTS), reference)


def test_submit_one_embeds_on_the_embedders_thread_while_the_caller_works_on(model: Embedder) -> None:
    model.clear_query_cache()
    pending = model.submit_one("a query embedded in the background")
    vector = pending.result(60)
    assert np.allclose(vector, model.encode(["a query embedded in the background"])[0], atol=1e-5)
    again = model.submit_one("a query embedded in the background")
    assert again.done() and again.result() is vector  # from the cache, already done
    assert model.encode_threads and model.encode_threads <= model.own_threads


def test_a_model_of_another_shape_or_that_disagrees_keeps_encode(second_model: Embedder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct path is taken only for a transformer + mean pooling model whose vectors it
    reproduces: the projected model (an extra Dense layer) and a model failing the check use encode."""
    assert not second_model.direct_path and second_model.runtime == "torch"  # not a graph ONNX reproduces
    vector = second_model.encode(["sourdough rye"])[0]
    assert vector.shape == (SECOND_DIM,)
    # A direct path that disagrees with encode: one component moved by far more than the tolerance.
    # (Not a negative tolerance: numpy's allclose accepts exactly equal vectors whatever the
    # tolerance, and on some machines the direct path reproduces encode bit for bit.)
    real_forward = Embedder._forward

    def disagreeing(self: Embedder, texts: list[str]) -> np.ndarray:
        vectors = np.array(real_forward(self, texts), copy=True)
        vectors[:, 0] += 100 * embedder_module.DIRECT_TOLERANCE
        return vectors

    monkeypatch.setattr(Embedder, "_forward", disagreeing)
    strict = Embedder("minilm", onnx=False).start()
    assert strict.wait(300) is EmbedderState.READY, strict.error
    assert not strict.direct_path
    reference = strict._submit(lambda: strict._model.encode(
        ["sourdough rye"], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)).result()
    assert np.array_equal(strict.encode(["sourdough rye"]), reference)
