"""How a hybrid query does its work (issue 10's end-to-end speed): the query is embedded while the
keyword stage runs, and full facts are read only for the results returned and their neighbours."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import numpy as np
import pytest

from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.embedder import Embedder
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import FactFilter, Vault


class Watched:
    """The real model, noting how many SQL statements had run when the query was handed to it."""

    def __init__(self, model: Embedder, statements: list[str]) -> None:
        self.model, self.statements = model, statements
        self.model_id, self.ready = model.model_id, True
        self.submitted_after: list[int] = []

    def submit_one(self, text: str) -> Future[np.ndarray]:
        self.submitted_after.append(len(self.statements))
        return self.model.submit_one(text)

    def encode_one(self, text: str) -> np.ndarray:
        self.submitted_after.append(len(self.statements))
        return self.model.encode_one(text)


def _trace(vault: Vault) -> list[tuple[str, Any]]:
    statements: list[tuple[str, Any]] = []

    def tracer(cursor: Any, sql: str, bindings: Any) -> bool:
        statements.append((sql, bindings))
        return True

    vault.reader().exec_trace = tracer
    return statements


def test_the_query_is_embedded_before_the_keyword_stage_runs(vault: Vault, model: Embedder) -> None:
    target = remember(vault, "The wombat sleeps in a burrow under the garden", Origin(kind="cli"))
    statements = _trace(vault)
    watched = Watched(model, statements)  # type: ignore[arg-type]
    service = SearchService(vault, watched)  # type: ignore[arg-type]
    model.clear_query_cache()
    results = service.search("where does the wombat sleep", FactFilter())
    vault.reader().exec_trace = None
    assert [r.fact.id for r in results][:1] == [target]
    assert watched.submitted_after == [0]  # handed to the model thread before any SQL ran
    assert any("chunks_fts MATCH" in sql for sql, _ in statements)


def test_full_facts_are_read_only_for_the_results_and_their_neighbours(hybrid_search: SearchService) -> None:
    vault = hybrid_search.vault
    ids = [remember(vault, f"heron sighting number {i} by the lake", Origin(kind="cli")) for i in range(40)]
    backfill(vault, hybrid_search.embedder)  # type: ignore[arg-type]
    hydrated: set[int] = set()

    def rows(cursor: Any, row: Any) -> Any:  # the ids of every row read as a full fact (its text and provenance)
        if {"text", "created_at", "tier"} <= {d[0] for d in cursor.description}:
            hydrated.add(row[0])
        return row

    vault.reader().row_trace = rows
    results = hybrid_search.search("heron sighting", FactFilter(), k=3)
    vault.reader().row_trace = None
    assert len(results) == 3 and {r.fact.id for r in results} <= set(ids)
    shown = {r.fact.id for r in results} | {n.id for r in results for n in (r.before, r.after) if n is not None}
    assert hydrated == shown  # not the 40 candidates


def test_a_vector_written_while_a_query_reads_joins_the_index(vault: Vault) -> None:
    """A query is one read transaction; a fact embedded after it began is not visible in it. The
    index must not consume that change there (it would read the row in the old snapshot and drop
    it): the next query's index has the new vector."""
    from vodou_desktop.search.vectors import VectorIndex
    from vodou_desktop.vault import Change
    from vodou_desktop.vault.facts import insert_fact, set_embeddings
    from vodou_desktop.vault.sources import stamp_source

    rng = np.random.default_rng(3)
    unit = rng.normal(size=(41, 16)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)

    def add(texts: list[str], vectors: np.ndarray) -> list[int]:
        def job(conn: Any, change: Change) -> list[int]:
            source = stamp_source(conn, change, kind="bench", tier="first_party")
            ids = [insert_fact(conn, change, text=t, source_id=source) for t in texts]
            set_embeddings(conn, change, zip(ids, vectors, strict=True), model="test")
            return ids

        return list(vault.write(job))

    add([f"walrus fact {i}" for i in range(40)], unit[:40])
    late: list[int] = []

    class WrittenOnWait(Future):  # type: ignore[type-arg]
        """The query's vector: while the query waits for it, another fact gets its vector."""

        def result(self, timeout: float | None = None) -> np.ndarray:
            if not self.done():
                late.extend(add(["a fact embedded during the query"], unit[40:]))
                self.set_result(unit[0])
            return super().result(timeout)  # type: ignore[no-any-return]

    class Stub:
        ready, model_id = True, "test"

        def submit_one(self, text: str) -> Future[np.ndarray]:
            return WrittenOnWait()

    index = VectorIndex(vault, model="test")
    index.load()
    service = SearchService(vault, Stub(), index)  # type: ignore[arg-type]
    assert service.search("walrus", FactFilter())  # the keyword stage read before the write
    assert late and index.top(unit[40], 1)[0][0] == late[0]
    index.close()


class _Failing:
    """The real model until it fails on a query: the Future fails (out of memory, a torch error) or
    the hand-off itself raises (the model stopped between the readiness check and the submit)."""

    def __init__(self, model: Embedder, how: str) -> None:
        self.model, self.how = model, how
        self.model_id, self.ready = model.model_id, True

    def submit_one(self, text: str) -> Future[np.ndarray]:
        if self.how == "submit":
            raise RuntimeError("embedder is off")
        failed: Future[np.ndarray] = Future()
        failed.set_exception(RuntimeError("out of memory"))
        return failed


@pytest.mark.parametrize("how", ["result", "submit"])
def test_a_query_the_model_fails_on_is_answered_from_keywords(hybrid_search: SearchService, how: str) -> None:
    vault = hybrid_search.vault
    target = remember(vault, "The wombat sleeps in a burrow under the garden", Origin(kind="cli"))
    remember(vault, "Herons nest in colonies by the river", Origin(kind="cli"))
    backfill(vault, hybrid_search.embedder)  # type: ignore[arg-type]
    failing = SearchService(vault, _Failing(hybrid_search.embedder, how), hybrid_search.index)  # type: ignore[arg-type]
    results = failing.search("wombat burrow", FactFilter())
    assert [r.fact.id for r in results] == [target]
    assert failing.gather("wombat burrow", FactFilter()).semantic is False


@pytest.mark.parametrize("index_loaded", [True, False])
def test_every_keyword_match_is_scored_by_its_cosine_whether_the_index_holds_it_or_not(
        vault: Vault, index_loaded: bool) -> None:
    """Keyword matches' cosines come from the index's rows; a match whose vector the index does not
    hold (not loaded yet, or written since its last sync) is scored from its stored vector instead:
    either way every keyword match with a vector of the index's model gets its exact cosine, and one
    of another model none."""
    from vodou_desktop.search.vectors import VectorIndex
    from vodou_desktop.vault import Change
    from vodou_desktop.vault.facts import insert_fact, set_embeddings
    from vodou_desktop.vault.sources import stamp_source

    rng = np.random.default_rng(11)
    unit = rng.normal(size=(30, 16)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)

    def job(conn: Any, change: Change) -> list[int]:
        source = stamp_source(conn, change, kind="bench", tier="first_party")
        ids = [insert_fact(conn, change, text=f"otter note {i}", source_id=source) for i in range(30)]
        set_embeddings(conn, change, zip(ids[:25], unit[:25], strict=True), model="test")
        set_embeddings(conn, change, zip(ids[25:], unit[25:], strict=True), model="other")
        return ids

    ids = list(vault.write(job))
    query = unit[0]

    class Given:
        ready, model_id = True, "test"

        def submit_one(self, text: str) -> Future[np.ndarray]:
            done: Future[np.ndarray] = Future()
            done.set_result(query)
            return done

    index = VectorIndex(vault, model="test")
    if index_loaded:
        index.load()
        assert index.cosines(query, ids) == pytest.approx({i: float(unit[n] @ query) for n, i in enumerate(ids[:25])},
                                                          abs=1e-6)
    cands = SearchService(vault, Given(), index).gather("otter", FactFilter())  # type: ignore[arg-type]
    assert set(cands.kw) == set(ids)
    assert {i: cands.vec[i] for i in ids if i in cands.vec} == pytest.approx(
        {i: float(unit[n] @ query) for n, i in enumerate(ids[:25])}, abs=1e-6)
    index.close()
