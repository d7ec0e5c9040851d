"""The embedding model on ONNX Runtime, without torch: the same vectors as ``encode``, a first answer
in well under a second, and a fraction of torch's memory (SEARCH-8).

The model's weights are exported once per model (and per version of the libraries involved) by a
child process — the only place torch is ever loaded for it: ``vodou --export-onnx-graph`` loads the
model with sentence-transformers, exports transformer + mean over the tokens + unit length as one
ONNX graph, saves the word-vector table beside it, then runs the torch-free path on a set of texts
(short, unicode, past the truncation length, a padded batch) and compares it with ``encode``. It
writes into the cache folder (``models/``), each file under a partial name renamed into place:

- ``NAME@FP.onnx``: the graph, from each token's word vector (``words``) to the unit vector;
- ``NAME@FP.words.npy``: the word-vector table (memory-mapped by every process: only the rows of
  the tokens seen are ever read in);
- ``NAME@FP.json``: the record, written last: the model files' signature, the libraries' versions,
  the tokenizer's truncation and padding settings, the width, and the check — the largest
  difference from ``encode`` and whether it is within ``TOLERANCE``. A process trusts a graph whose
  record says it passed, and only that.

``FP`` fingerprints the model folder's files (names and contents) and the versions of the exporting
and running libraries, so a changed model or library never reuses an old graph; the record keeps the
files' sizes and times as well, so a process finds its graph without reading the model's 90 MB
(``find``). Every other process — the CLI, ``vodou mcp``, ``vodou serve``, the tray app — reads the
model folder's ``tokenizer.json`` with the ``tokenizers`` library and runs the graph on ONNX Runtime
(``OnnxModel``): torch, transformers and sentence-transformers are never imported.

One export at a time per model: the child holds a lock (``NAME@FP.lock``); a second child finds it
held and leaves at once (exit code ``BUSY``), and its parent waits for the first to finish.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import secrets
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where it is used: `vodou` imports this module for
    import numpy as np  # every command (CHILD_FLAG), and most commands never need numpy

log = logging.getLogger(__name__)
EXPORT_FORMAT = 3  # bump when what the export writes changes, so older cached graphs are ignored
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
WORDS = "words"  # the graph's first input: each token's word vector (the table stays outside the graph)
TOLERANCE = 1e-5  # largest difference per component allowed between the ONNX path and encode
STALE_PARTIAL_S = 3600.0  # a half-written export older than this was left by a process that died
# The export takes 10-25 s of CPU (torch's import, the trace, the check); on a 2-core machine shared with
# heavy jobs it took 90-160 s of wall clock. Keyword search works meanwhile; a stuck export gives up.
EXPORT_TIMEOUT_S = 600.0
CHILD_FLAG = "--export-onnx-graph"  # ``vodou`` runs the export child with this (not a command people type)
BUSY = 3  # the child's exit code when another process is exporting the same model
PROGRESS = "vodou-export-progress"  # the child's progress lines on stdout: PROGRESS step total text
STEPS = 4
# The texts the export checks the ONNX path on, alone and as one padded batch: short, odd, unicode,
# and two past the truncation length (256 word pieces for all-MiniLM-L6-v2).
CHECK_TEXTS = (
    "where did I put the spare key",
    "x",
    "ünïcödé — an emoji 🐦, 中文字符 and a date 2023-05-07",
    "Herons nest in colonies! The QUICK brown fox; e-mail: someone@example.org",
    "a long text " * 400,
    " ".join(f"word{i} and more" for i in range(300)),
)
VERSIONED = ("torch", "transformers", "sentence-transformers", "onnxruntime", "tokenizers", "onnx")
PIECES = ("onnx", "words.npy", "json")  # the files of one exported model, the record last

Progress = Callable[[int, int, str], None]  # (step, steps, what)


def available() -> bool:
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except Exception:
        return False
    return True


def versions() -> dict[str, str]:
    """The installed versions of the libraries that export and run the graph (read from their
    metadata, never by importing them)."""
    found = {}
    for name in VERSIONED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "-"
    return found


def fingerprint(model_dir: Path, libraries: dict[str, str] | None = None) -> str:
    """The model's files (names and contents) and the libraries' versions."""
    libraries = versions() if libraries is None else libraries
    digest = hashlib.sha256(f"{EXPORT_FORMAT}|{OPSET}|{json.dumps(libraries, sort_keys=True)}".encode())
    for path in _model_files(model_dir):
        digest.update(str(path.relative_to(model_dir)).encode() + b"\0")
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:24]


def files_signature(model_dir: Path) -> list[list[Any]]:
    """Each model file's name, size and modification time: what ``find`` compares (no file is read)."""
    out: list[list[Any]] = []
    for path in _model_files(model_dir):
        st = path.stat()
        out.append([str(path.relative_to(model_dir)), st.st_size, st.st_mtime_ns])
    return out


def _model_files(model_dir: Path) -> list[Path]:
    return sorted(p for p in model_dir.rglob("*") if p.is_file())


def exportable(model_dir: Path) -> bool:
    """Whether the model folder declares the shape the graph reproduces: a transformer, mean pooling,
    and optionally unit length (read from its ``modules.json``; the export checks it again)."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]):
            return False
        pooling = json.loads((model_dir / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
        return modes == ["pooling_mode_mean_tokens"] and (model_dir / "tokenizer.json").is_file()
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return False


# -- the torch-free model ------------------------------------------------------------------------

class OnnxModel:
    """The model's own tokenizer (``tokenizer.json``, through the ``tokenizers`` library, truncated
    and padded as sentence-transformers does it) + an ONNX Runtime session of transformer, mean
    pooling and unit length. ``words`` is the word-vector table (memory-mapped from the cache:
    only the rows of tokens seen are read in). No spinning threads: they slow everything else when
    the cores are busy. Safe to call from several threads at once (each call tokenizes on its own
    copy of the settings: the tokenizer is configured once and never changed afterwards)."""

    def __init__(self, model_dir: Path, graph: bytes | Path, words: np.ndarray, settings: dict[str, Any],
                 threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Shapes change with every batch: no memory pattern to plan, and no arena keeping the
        # largest batch's buffers for good (a long-running process would carry them all day).
        options.enable_mem_pattern = False
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3
        source = graph if isinstance(graph, bytes) else str(graph)
        self._session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=int(settings["max_length"]), stride=0,
                                    strategy="longest_first", direction=settings.get("truncation_side", "right"))
        tokenizer.enable_padding(direction=settings.get("padding_side", "right"), pad_id=int(settings["pad_id"]),
                                 pad_type_id=int(settings.get("pad_type_id", 0)), pad_token=settings["pad_token"])
        self._tokenizer = tokenizer
        self._words = words
        self.dim = int(words.shape[1]) if settings.get("dim") is None else int(settings["dim"])

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        columns = {"input_ids": ids,
                   "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
                   "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64)}
        feed = {name: columns[name] for name in self._inputs if name != WORDS}
        feed[WORDS] = np.asarray(self._words[ids], dtype=np.float32)
        return np.asarray(self._session.run(None, feed)[0], dtype=np.float32)


@dataclass(frozen=True)
class Prepared:
    """An exported model as found in the cache (or, without a cache, held in memory)."""

    record: dict[str, Any]
    graph: Path | bytes | None = None  # None when the record says the check failed
    words: Path | np.ndarray | None = None

    @property
    def verified(self) -> bool:
        return bool(self.record.get("verified"))

    def load(self, model_dir: Path, threads: int = 1) -> OnnxModel:
        import numpy as np

        if self.graph is None or self.words is None:
            raise RuntimeError(f"the ONNX graph failed its check: {self.record.get('reason')}")
        words = np.load(self.words, mmap_mode="r") if isinstance(self.words, Path) else self.words
        return OnnxModel(model_dir, self.graph, words, self.record["settings"], threads)


# -- finding and making the graph ------------------------------------------------------------------

def stem_for(model_dir: Path, name: str, libraries: dict[str, str] | None = None) -> str:
    return f"{name}@{fingerprint(model_dir, libraries)}"


def find(model_dir: Path, cache_dir: Path | None, name: str) -> Prepared | None:
    """This model's exported graph from the cache, when its record fits the model folder as it is
    and the libraries installed now (passed or not: the caller reads ``verified``); None when there
    is none. Reads no model file when the files' sizes and times match a record; else fingerprints
    their contents (a copied or touched model folder with the same files still fits)."""
    if cache_dir is None:
        return None
    folder = cache_dir / "models"
    libraries = versions()
    signature = files_signature(model_dir)
    records = []
    for path in sorted(folder.glob(f"{_glob_escape(name)}@*.json")) if folder.is_dir() else []:
        record = _read_record(path)
        if record is not None and record.get("format") == EXPORT_FORMAT and record.get("versions") == libraries:
            records.append((path, record))
    for path, record in records:
        if record.get("files") == signature:
            found = _pieces(path, record)
            if found is not None:
                return found
    if records:  # same libraries, files touched since: compare contents
        stem = stem_for(model_dir, name, libraries)
        for path, record in records:
            if path.name == f"{stem}.json":
                return _pieces(path, record)
    return None


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]" else c for c in text)


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _pieces(record_path: Path, record: dict[str, Any]) -> Prepared | None:
    """The graph and table beside a record, if they are the very files the export wrote."""
    stem = record_path.name[: -len(".json")]
    if not record.get("verified"):
        return Prepared(record)  # nothing to load: the record says why
    graph, words = record_path.with_name(f"{stem}.onnx"), record_path.with_name(f"{stem}.words.npy")
    try:
        for path, key in ((graph, "graph"), (words, "words")):
            st = path.stat()
            if [st.st_size, st.st_mtime_ns] != record.get(key):
                log.info("Cached ONNX %s %s changed since its check; not used", key, path.name)
                return None
    except OSError:
        return None
    return Prepared(record, graph, words)


def prepare(model_dir: Path, cache_dir: Path | None, name: str, progress: Progress | None = None,
            timeout: float = EXPORT_TIMEOUT_S, cancel: threading.Event | None = None) -> Prepared:
    """This model's graph: from the cache, else exported now in a child process (which checks it
    against ``encode`` and caches it). Raises when the export fails, or when ``cancel`` is set while
    another process's export is awaited. Without a usable cache folder, the child writes into a temp
    folder and the graph and table are held in memory."""
    found = find(model_dir, cache_dir, name)
    if found is not None:
        return found
    folder = _cache_folder(cache_dir)
    started = time.monotonic()
    if progress is not None:
        progress(0, STEPS, "starting the export")
    if folder is None:
        import tempfile

        import numpy as np

        with tempfile.TemporaryDirectory(prefix="vodou-onnx-") as temp:
            stem = stem_for(model_dir, name)
            run_export_child(model_dir, Path(temp), stem, progress, timeout)
            record = _read_record(Path(temp) / f"{stem}.json")
            if record is None:
                raise RuntimeError("the ONNX export wrote no record")
            if not record.get("verified"):
                return Prepared(record)
            graph = (Path(temp) / f"{stem}.onnx").read_bytes()
            words = np.array(np.load(Path(temp) / f"{stem}.words.npy"))
        return Prepared(record, graph, words)
    stem = stem_for(model_dir, name)
    deadline = time.monotonic() + timeout
    while True:
        code = run_export_child(model_dir, folder, stem, progress, max(1.0, deadline - time.monotonic()))
        if code != BUSY:
            break
        wait_for_lock(folder / f"{stem}.lock", deadline, cancel)  # another process exports it: wait, then look
        if cancel is not None and cancel.is_set():
            raise RuntimeError("stopped waiting for another process's export")
        if find(model_dir, cache_dir, name) is not None or time.monotonic() > deadline:
            break
    found = find(model_dir, cache_dir, name)
    if found is None:
        raise RuntimeError("the ONNX export left no usable graph in the cache")
    log.info("Exported %s to ONNX in %.1f s (largest difference from encode %s)", name,
             time.monotonic() - started, found.record.get("max_difference"))
    return found


def _cache_folder(cache_dir: Path | None) -> Path | None:
    """``cache_dir/models``, made private, or None when it cannot be written."""
    if cache_dir is None:
        return None
    folder = cache_dir / "models"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        probe = folder / f".probe-{os.getpid()}-{secrets.token_hex(4)}"
        probe.touch(mode=0o600, exist_ok=False)
        probe.unlink()
    except OSError:
        log.info("Could not cache the ONNX graph in %s", folder, exc_info=True)
        return None
    return folder


def run_export_child(model_dir: Path, folder: Path, stem: str, progress: Progress | None = None,
                     timeout: float = EXPORT_TIMEOUT_S) -> int:
    """Run the export child (``vodou --export-onnx-graph MODEL_DIR FOLDER STEM``) and wait for it,
    passing on its progress; returns its exit code (0, or ``BUSY``), raises when it fails.

    The child is a new interpreter running only the export (a bundle runs its own executable), in a
    session of its own: a one-shot command that stops waiting (or exits) leaves it to finish and
    cache the graph for the next one. Its errors go to a log file beside the graph, not to a pipe
    its parent may have closed."""
    runner = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "vodou_desktop"]
    errors = folder / f"{stem}.export-{os.getpid()}-{secrets.token_hex(2)}.log"  # its own, beside a busy export
    with errors.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen([*runner, CHILD_FLAG, str(model_dir), str(folder), stem, str(int(timeout))],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
    timer = threading.Timer(timeout, proc.kill)
    timer.daemon = True
    timer.start()
    try:
        with proc:  # closes its pipe and waits for it
            assert proc.stdout is not None
            for line in proc.stdout:
                parts = line.split(" ", 3)
                if progress is not None and len(parts) == 4 and parts[0] == PROGRESS:
                    with contextlib.suppress(Exception):
                        progress(int(parts[1]), int(parts[2]), parts[3].strip())
        code = proc.returncode
    finally:
        timer.cancel()
    if code in (0, BUSY):
        errors.unlink(missing_ok=True)
        return code
    last = ([ln for ln in _tail(errors) if ln.strip()] or ["no message"])[-1]
    if code < 0:
        raise TimeoutError(f"the ONNX export was stopped after {timeout:.0f} s")
    raise RuntimeError(f"the ONNX export failed (exit code {code}: {last.strip()})")


def _tail(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
    except OSError:
        return []


def wait_for_lock(lock: Path, deadline: float, cancel: threading.Event | None = None) -> None:
    """Return once no process holds ``lock`` (or at ``deadline``, or once ``cancel`` is set)."""
    stop = cancel if cancel is not None else threading.Event()
    while time.monotonic() < deadline and not stop.is_set():
        with _locked(lock, block=False) as held:
            if held:
                return
        stop.wait(0.25)


@contextlib.contextmanager
def _locked(lock: Path, block: bool) -> Iterator[bool]:
    """Hold an exclusive lock on ``lock`` while in the block; yields whether it was taken. Where
    file locks do not exist, yields True (two exports at once then both write whole files)."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


# -- the export child (torch is imported here only) ---------------------------------------------

def child_main(argv: list[str]) -> int:
    """``vodou --export-onnx-graph MODEL_DIR FOLDER STEM [TIMEOUT]``: export, check and write."""
    model_dir, folder, stem = Path(argv[0]), Path(argv[1]), argv[2]
    timeout = float(argv[3]) if len(argv) > 3 else EXPORT_TIMEOUT_S
    watchdog = threading.Timer(timeout, os._exit, args=(4,))  # never outlive a parent that gave up
    watchdog.daemon = True
    watchdog.start()
    if not exportable(model_dir):
        print(f"vodou: {model_dir} is not a model folder of a transformer with mean pooling", file=sys.stderr)
        return 1
    with _locked(folder / f"{stem}.lock", block=False) as held:
        if not held:
            return BUSY
        if _read_record(folder / f"{stem}.json") is not None:  # done by another process meanwhile
            return 0
        record = export_checked(model_dir, folder, stem, _say)
        _say(STEPS, STEPS, "checked: " + ("the same vectors as encode" if record["verified"] else record["reason"]))
        _remove_older(folder, stem)
    return 0


def _say(step: int, steps: int, what: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # the parent may have stopped listening
        print(f"{PROGRESS} {step} {steps} {what}", flush=True)


def export_checked(model_dir: Path, folder: Path, stem: str, say: Progress) -> dict[str, Any]:
    """Export the model in ``model_dir`` into ``folder`` as ``stem``.*, check the torch-free path
    against ``encode`` and write the record (last). Returns the record."""
    from vodou_desktop.search.embedder import model_environment

    model_environment()
    say(1, STEPS, "loading the model")
    import numpy as np
    from sentence_transformers import SentenceTransformer

    libraries = versions()
    signature = files_signature(model_dir)
    model: Any = SentenceTransformer(str(model_dir), device="cpu")
    record: dict[str, Any] = {"format": EXPORT_FORMAT, "stem": stem, "versions": libraries, "files": signature,
                              "tolerance": TOLERANCE, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    reason = _unsupported(model)
    if reason:
        record.update(verified=False, reason=reason)
        _write(folder / f"{stem}.json", json.dumps(record, indent=1).encode())
        return record
    first: Any = model[0]
    tokenizer: Any = first.tokenizer
    settings = {"max_length": int(model.max_seq_length), "pad_id": int(tokenizer.pad_token_id),
                "pad_token": str(tokenizer.pad_token), "pad_type_id": int(getattr(tokenizer, "pad_token_type_id", 0)),
                "padding_side": str(getattr(tokenizer, "padding_side", "right")),
                "truncation_side": str(getattr(tokenizer, "truncation_side", "right")),
                "dim": int(model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension")
                           else model.get_sentence_embedding_dimension())}
    say(2, STEPS, "exporting the graph")
    graph = export(first.auto_model, tokenizer)
    table = first.auto_model.get_input_embeddings().weight.detach().numpy().astype(np.float32)
    graph_path, words_path = folder / f"{stem}.onnx", folder / f"{stem}.words.npy"
    _write(graph_path, graph)
    buffer = io.BytesIO()
    np.save(buffer, table, allow_pickle=False)
    _write(words_path, buffer.getvalue())
    say(3, STEPS, "checking it against the model")
    onnx = OnnxModel(model_dir, graph_path, np.load(words_path, mmap_mode="r"), settings)
    texts = list(CHECK_TEXTS)
    reference = np.asarray(model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                        show_progress_bar=False), dtype=np.float32)
    singles = np.concatenate([onnx([t]) for t in texts])
    batch = onnx(texts)
    difference = max(float(np.abs(singles - reference).max()), float(np.abs(batch - reference).max()))
    verified = singles.shape == reference.shape == batch.shape and difference <= TOLERANCE
    record.update(settings=settings, dim=settings["dim"], max_difference=difference, samples=len(texts),
                  verified=verified, reason=None if verified else f"differs from encode by {difference:.2e}",
                  graph=[graph_path.stat().st_size, graph_path.stat().st_mtime_ns],
                  words=[words_path.stat().st_size, words_path.stat().st_mtime_ns])
    _write(folder / f"{stem}.json", json.dumps(record, indent=1).encode())
    return record


def _unsupported(model: Any) -> str | None:
    """Why the graph could not reproduce this model, or None when it can."""
    names = [type(m).__name__ for m in model]
    if names not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]):
        return f"modules {names}, not a transformer with mean pooling"
    if getattr(model[1], "pooling_mode", None) != "mean" or not hasattr(model[0], "auto_model"):
        return "not mean pooling over a transformer"
    if not getattr(model[0].tokenizer, "is_fast", False):
        return "no fast tokenizer (tokenizer.json)"
    return None


def _write(path: Path, data: bytes) -> None:
    """``data`` into ``path`` through a partial file renamed into place (never half a file)."""
    partial = path.with_name(f"{path.name}.part-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with open(partial, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(partial, 0o600)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


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


def _remove_older(folder: Path, stem: str) -> None:
    """This model's files from other fingerprints (and partial files left by a process that died)."""
    name = stem.rpartition("@")[0]
    now = time.time()
    for old in _files_of(folder, name):
        if old.name.startswith(f"{stem}.") and ".part-" not in old.name:
            continue
        if ".part-" in old.name and now - old.stat().st_mtime <= STALE_PARTIAL_S:
            continue  # another process writing right now
        if old.name.endswith(".lock") and not old.name.startswith(f"{stem}."):
            with _locked(old, block=False) as free:
                if not free:
                    continue
        with contextlib.suppress(OSError):
            old.unlink()


def _files_of(folder: Path, name: str) -> list[Path]:
    """Files named ``{name}@...`` (graphs, tables, records, locks and partial files of exactly this model)."""
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.name.rpartition("@")[0] == name]
