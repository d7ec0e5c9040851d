"""A query's vector through ONNX Runtime: the same model, the same vectors, about twice as fast.

For one short text (a query), torch's eager forward of all-MiniLM-L6-v2 takes ~12 ms here and holds
the GIL between its ~100 ops, so the search running beside it slows it further. The same weights
exported once to ONNX (transformer, mean over the tokens, unit length: one graph) run in ONNX
Runtime in ~6 ms on one thread, with the GIL released for the whole run.

The graph is exported on this machine from the model's own files (nothing is downloaded) and kept in
the cache folder under a name that fingerprints the model's files and the exporting library
versions, so a changed model or library never reuses an old graph. The caller checks the session's
vectors against the torch path before using it (``Embedder``): any doubt, and queries stay on torch.
"""

from __future__ import annotations

import copy
import hashlib
import io
import logging
import os
import secrets
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where it is used: `vodou` imports this module for
    import numpy as np  # every command (CHILD_FLAG), and most commands never need numpy

log = logging.getLogger(__name__)
EXPORT_FORMAT = 2  # bump when the exported graph changes shape, so older cached graphs are ignored
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
WORDS = "words"  # the graph's first input: each token's word vector (the table stays outside the graph)
STALE_PARTIAL_S = 3600.0  # a half-written export older than this was left by a process that died
# The export took 5-9 s here; the model is not ready while it runs (keyword search only meanwhile), so
# a stuck export gives up well before a person would wonder.
EXPORT_TIMEOUT_S = 120.0
CHILD_FLAG = "--export-onnx-graph"  # ``vodou`` runs the export child with this (not a command people type)


def available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except Exception:
        return False
    return True


def fingerprint(model_dir: Path) -> str:
    """The model's files (names and contents) and the exporting libraries' versions."""
    import torch
    import transformers

    digest = hashlib.sha256(f"{EXPORT_FORMAT}|{OPSET}|{torch.__version__}|{transformers.__version__}".encode())
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(model_dir)).encode() + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:24]


class OnnxQueryModel:
    """Tokenizer (the model's own) + an ONNX Runtime session of transformer, mean pooling and
    normalisation. One intra-op thread and no spinning: it runs beside the search's own work on
    the other core, and spinning threads slow everything else when the cores are busy.

    The graph starts after the word lookup: ``words`` is the loaded model's own word-vector table
    (the torch parameter's memory, not a copy), so the session does not hold a second copy of its
    47 MB; a query's rows are picked here."""

    def __init__(self, tokenizer: Any, max_length: int, graph: bytes | Path, words: np.ndarray) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        source = graph if isinstance(graph, bytes) else str(graph)
        self._session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]
        # A copy of its own: queries run on a thread of their own while batches tokenize on the
        # model's thread, and a fast tokenizer called from two threads at once can fail ("Already
        # borrowed": each call sets its padding and truncation on the shared object).
        self._tokenizer = copy.deepcopy(tokenizer)
        self._max_length = max_length
        self._words = words

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        enc = self._tokenizer(list(texts), padding=True, truncation="longest_first",
                              max_length=self._max_length, return_tensors="np")
        feed = {name: np.asarray(enc[name], dtype=np.int64) for name in self._inputs if name != WORDS}
        feed[WORDS] = self._words[np.asarray(enc["input_ids"], dtype=np.int64)]
        return np.asarray(self._session.run(None, feed)[0], dtype=np.float32)


def word_table(transformer: Any) -> np.ndarray:
    """The model's word-vector table as an array sharing the parameter's memory."""
    table: np.ndarray = transformer.get_input_embeddings().weight.detach().numpy()
    return table


def export(transformer: Any, tokenizer: Any) -> bytes:
    """The ONNX graph of ``transformer`` (a Hugging Face model) from its word vectors (``WORDS``,
    looked up by the caller) + mean pooling + unit length."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self, model: Any, names: list[str]) -> None:
            super().__init__()
            self.model, self.names = model, names

        def forward(self, words: Any, *args: Any) -> Any:
            kwargs = dict(zip(self.names, args, strict=True))
            tokens = self.model(inputs_embeds=words, **kwargs).last_hidden_state
            mask = kwargs["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    sample = tokenizer(["an example query"], return_tensors="pt")
    names = [n for n in INPUTS if n in sample and n != "input_ids"]
    wrapper = Pooled(transformer.eval(), names).eval()
    out = io.BytesIO()
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        words = transformer.get_input_embeddings()(sample["input_ids"])
        # The TorchScript exporter (dynamo=False) writes to a file object too; the stub says paths only.
        torch.onnx.export(wrapper, (words, *(sample[n] for n in names)), out,  # type: ignore[arg-type]
                          input_names=[WORDS, *names], output_names=["vector"],
                          dynamic_axes={n: {0: "texts", 1: "tokens"} for n in [WORDS, *names]},
                          opset_version=OPSET, dynamo=False)
    return out.getvalue()


def child_main(argv: list[str]) -> int:
    """The export child (``vodou --export-onnx-graph MODEL_DIR OUT``): load the model from its
    folder, export it, write the graph to ``OUT``."""
    from vodou_desktop.search.embedder import model_environment

    model_environment()
    from sentence_transformers import SentenceTransformer

    model_dir, out = argv
    first = SentenceTransformer(model_dir, device="cpu")[0]
    Path(out).write_bytes(export(first.auto_model, first.tokenizer))
    return 0


def export_in_child(model_dir: Path, out: Path, timeout: float = EXPORT_TIMEOUT_S) -> None:
    """``export`` of the model in ``model_dir``, run in a child process that writes the graph to
    ``out`` (nothing is left there when it fails): tracing holds a few hundred MB for a moment, which
    a long-running process would keep (the allocator does not give it back). The child is a new
    interpreter running only the export (a bundle runs its own executable)."""
    import subprocess
    import sys

    runner = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "vodou_desktop"]
    try:
        done = subprocess.run([*runner, CHILD_FLAG, str(model_dir), str(out)], capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:  # the child was killed
        out.unlink(missing_ok=True)
        raise TimeoutError(f"the ONNX export took over {timeout:.0f} s") from None
    if done.returncode != 0 or not out.is_file():
        out.unlink(missing_ok=True)
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the ONNX export failed (exit code {done.returncode}: {last})")


def load_or_export(tokenizer: Any, max_length: int, words: np.ndarray, model_dir: Path,
                   cache_dir: Path | None, name: str) -> OnnxQueryModel:
    """The session for this model: from the cached graph when its fingerprint matches, else
    exported now (a few seconds in a child process, once per model) and cached. A cache that
    cannot be written only costs the export again at the next start."""
    path = None
    if cache_dir is not None:
        path = cache_dir / "models" / f"{name}@{fingerprint(model_dir)}.onnx"
        if path.is_file():
            try:
                return OnnxQueryModel(tokenizer, max_length, path, words)
            except Exception:
                log.info("Cached ONNX graph %s unreadable; exporting it again", path.name, exc_info=True)
    started = time.monotonic()
    partial = _partial_for(path) if path is not None else None
    graph: Path | bytes
    if path is not None and partial is not None:
        # The child writes the graph straight into the cache under a partial name: no second copy
        # through this process, and what a killed process leaves there is removed by the next export.
        try:
            export_in_child(model_dir, partial)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)  # gone after the rename
        graph = path
    else:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="vodou-onnx-") as folder:  # no cache: the graph is held here
            out = Path(folder) / "graph.onnx"
            export_in_child(model_dir, out)
            graph = out.read_bytes()
    log.info("Exported %s to ONNX in %.1f s", name, time.monotonic() - started)
    return OnnxQueryModel(tokenizer, max_length, graph, words)


def _partial_for(path: Path) -> Path | None:
    """The name this process writes ``path``'s graph under before the rename, with the cache folder
    made and this model's older graphs (and partial files left by a process that died) removed; None
    when the cache folder cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        now = time.time()
        for old in _graphs(path.parent, path.name.rpartition("@")[0]):
            partial = ".part-" in old.name
            if old != path and (not partial or now - old.stat().st_mtime > STALE_PARTIAL_S):
                old.unlink(missing_ok=True)
        probe = path.with_name(f"{path.name}.part-{os.getpid()}-{secrets.token_hex(4)}")  # one per export
        probe.touch(mode=0o600, exist_ok=False)
        return probe
    except OSError:
        log.info("Could not cache the ONNX graph at %s", path, exc_info=True)
        return None


def discard(cache_dir: Path | None, name: str) -> None:
    """Remove this model's cached graphs (after they failed the check against torch)."""
    if cache_dir is None:
        return
    for old in _graphs(cache_dir / "models", name):
        old.unlink(missing_ok=True)


def _graphs(folder: Path, name: str) -> list[Path]:
    """Files named ``{name}@...`` (graphs and partial graphs of exactly this model)."""
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.name.rpartition("@")[0] == name]
