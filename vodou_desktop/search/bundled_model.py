"""The default embedding model: bge-small-en-v1.5, quantised to int8, as ONNX — ready at the first
search, with no export step and no torch (SEARCH-1, SEARCH-8).

The graph and its ``tokenizer.json`` ship inside the registry package ``compartment`` (pinned in
pyproject.toml; Apache-2.0; BAAI's model card: MIT), in ``compartment/models/bge-small-en-v1.5-int8/``.
Only those two files are read: the package is located without being imported (its ``__init__``
would run code of its own), and each file's sha256 is checked against the value pinned here before
it is used, so a changed or damaged file is refused rather than searched with.

The model: a BERT encoder; a text's vector is the hidden state of its first token (``[CLS]``), unit
length, 384 dimensions; the first 256 word pieces of a text are read (``MAX_TOKENS``). Queries and
memories are embedded the same way (no query instruction: it made no difference on LoCoMo, .642
against .644 dense-only hit@10; bench/notes/recall.md).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "bge-small-en-v1.5-int8"  # what the vault records beside each vector of this model
PACKAGE = "compartment"
FOLDER = ("models", "bge-small-en-v1.5-int8")
GRAPH = "model_quantized.onnx"
TOKENIZER = "tokenizer.json"
SHA256 = {
    GRAPH: "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    TOKENIZER: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}
DIM = 384
# Word pieces read of a text: the first 256, as for all-MiniLM-L6-v2. The model can read 512, but a run
# costs about the square of its length: a long assistant reply took 2.3x as long at 512 (bench.models),
# and the start of a long text carries what it is about.
MAX_TOKENS = 256


class ModelFileError(RuntimeError):
    """A file of the bundled model is missing or is not the one pinned."""


def model_dir() -> Path:
    """The model's folder inside the installed package (found without importing the package)."""
    bundled = getattr(sys, "_MEIPASS", None)  # the PyInstaller bundle: the model's files, not the package
    if getattr(sys, "frozen", False) and bundled and Path(bundled, PACKAGE, *FOLDER).is_dir():
        return Path(bundled, PACKAGE, *FOLDER)
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(f"the package {PACKAGE!r} that ships the default model is not installed")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*FOLDER)


def checked_bytes(folder: Path, name: str) -> bytes:
    """The file's bytes, once its sha256 is the pinned one (about 0.05 s for the 34 MB graph); raises
    otherwise. The bytes checked are the bytes used: the file is read once, not checked then read again."""
    path = folder / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"the model file {path} cannot be read ({exc.strerror or exc})") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        raise ModelFileError(f"the model file {path} is not the one this version was built with "
                             f"(sha256 {digest[:16]}…, expected {SHA256[name][:16]}…)")
    return data


class ClsModel:
    """The tokenizer (``tokenizers``) and an ONNX Runtime session of the encoder, each built from the
    bytes whose sha256 was checked; ``__call__`` gives
    unit-length ``[CLS]`` vectors. Safe to call from several threads."""

    def __init__(self, folder: Path, threads: int = 1) -> None:
        graph, tokenizer_json = checked_bytes(folder, GRAPH), checked_bytes(folder, TOKENIZER)
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # read when the library is first imported
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_mem_pattern = False  # shapes change with every pass
        options.enable_cpu_mem_arena = False  # no arena keeping the largest pass's buffers for good
        options.log_severity_level = 3
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        del graph
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self.dim = DIM

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, each text run alone: the int8 graph quantises its activations per
        run (one scale for the whole batch), so a text run beside others gets another vector (cosine
        .99 here); alone, every text has one vector whatever the batch. Alone is also faster here (no
        padding): 50 against 17 short texts a second, 3.3 against 1.7 of 512 word pieces
        (bench/notes/recall.md)."""
        import numpy as np

        clean = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # a lone surrogate: U+FFFD
        out = np.empty((len(clean), DIM), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(clean)):
            out[row] = self._run(encoding.ids)
        return out

    def _run(self, ids: list[int]) -> np.ndarray:
        import numpy as np

        tokens = np.asarray([ids], dtype=np.int64)
        feed = {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(tokens)
        first = np.asarray(self._session.run(None, feed)[0][0, 0], dtype=np.float32)
        norm = float(np.linalg.norm(first))
        return first / norm if norm else first  # type: ignore[no-any-return]


def load(threads: int = 1, folder: Path | None = None) -> ClsModel:
    """The bundled model (or the same files in ``folder``), each file checked before it is used."""
    return ClsModel(folder or model_dir(), threads)
