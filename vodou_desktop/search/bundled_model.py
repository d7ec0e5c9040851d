"""The default embedding model: bge-small-en-v1.5, quantised to int8, as ONNX — ready at the first
search, with no export step and no torch (SEARCH-1, SEARCH-8).

The graph and its ``tokenizer.json`` ship inside the registry package ``compartment`` (pinned in
pyproject.toml; Apache-2.0; BAAI's model card: MIT), in ``compartment/models/bge-small-en-v1.5-int8/``.
Only those two files are read: the package is located without being imported (its ``__init__``
would run code of its own), and each file's sha256 is checked against the value pinned here before
it is used, so a changed or damaged file is refused rather than searched with.

The model: a BERT encoder; a text's vector is the hidden state of its first token (``[CLS]``), unit
length, 384 dimensions; 512 word pieces at most (the rest of a longer text is not read). Queries and
memories are embedded the same way (no query instruction: it made no difference on LoCoMo, .642
against .644 dense-only hit@10; bench/notes/recall.md).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
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
MAX_TOKENS = 512
# Padded word pieces per forward pass: attention grows with batch x length^2, so a batch is as many
# texts as fit under this (64 short memories, or 8 of 512 pieces), which keeps a long-running
# process's peak memory low (bench/rss.py) at the same speed.
BATCH_TOKENS = 4096


class ModelFileError(RuntimeError):
    """A file of the bundled model is missing or is not the one pinned."""


def model_dir() -> Path:
    """The model's folder inside the installed package (found without importing the package)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(f"the package {PACKAGE!r} that ships the default model is not installed")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*FOLDER)


def verify(folder: Path) -> None:
    """Each file's sha256 is the pinned one (about 0.1 s for the 34 MB graph); raises otherwise."""
    for name, expected in SHA256.items():
        path = folder / name
        digest = hashlib.sha256()
        try:
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise ModelFileError(f"the model file {path} cannot be read ({exc.strerror or exc})") from exc
        if digest.hexdigest() != expected:
            raise ModelFileError(f"the model file {path} is not the one this version was built with "
                                 f"(sha256 {digest.hexdigest()[:16]}…, expected {expected[:16]}…)")


class ClsModel:
    """The tokenizer (``tokenizers``) and an ONNX Runtime session of the encoder; ``__call__`` gives
    unit-length ``[CLS]`` vectors. Every text is padded only to the longest of its own pass, so a
    vector never depends on the batch its text was in. Safe to call from several threads."""

    def __init__(self, folder: Path, threads: int = 1) -> None:
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
        self._session = ort.InferenceSession(str(folder / GRAPH), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self.dim = DIM

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        clean = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # a lone surrogate: U+FFFD
        ids = [e.ids for e in self._tokenizer.encode_batch(clean)]
        out = np.empty((len(ids), DIM), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for part in _passes(order, ids):
            out[part] = self._run([ids[i] for i in part])
        return out

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        import numpy as np

        width = max(len(x) for x in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, x in enumerate(ids):
            tokens[row, : len(x)] = x
            mask[row, : len(x)] = 1
        feed = {"input_ids": tokens, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(tokens)
        first = np.asarray(self._session.run(None, feed)[0][:, 0], dtype=np.float32)
        norms = np.linalg.norm(first, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return first / norms  # type: ignore[no-any-return]


def _passes(order: list[int], ids: list[list[int]]) -> list[list[int]]:
    """Indices in order of length, grouped so no pass pads past ``BATCH_TOKENS`` word pieces."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) + 1) * len(ids[i]) > BATCH_TOKENS:
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def load(threads: int = 1) -> ClsModel:
    """The bundled model, its files checked first."""
    folder = model_dir()
    verify(folder)
    return ClsModel(folder, threads)
