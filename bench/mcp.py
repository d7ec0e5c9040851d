"""MCP round trip: ``search_memory`` through a real ``vodou mcp`` process and the SDK's stdio client,
against an in-process ``SearchService.search`` of the same queries on the same vault, in the same run.

Both sides embed the query (the figure a person feels), search under a project filter and return
the top 8. The MCP figure adds what the protocol costs: JSON-RPC over pipes, argument checks, the
project lookup, rendering each memory with its provenance. Target: MCP p50 <= 1.5x in-process p50.

    python -m bench.mcp [--size 10000] [--queries 100] [--no-model]

Also the first ``search_memory`` of the new server (model exported earlier, as after a first run):
seconds from spawning the process to the answer, and whether it used meaning (target <= 2 s).

Both processes get the same number of torch/BLAS threads (``OMP_NUM_THREADS``, default 1 here): on an
oversubscribed machine two threads per process made one query's embedding 10-20x slower, which
would compare scheduling luck rather than the protocol.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy or torch load, here and in the server
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from bench import measure  # noqa: E402
from bench.build import build  # noqa: E402
from bench.corpus import PROJECTS, queries  # noqa: E402
from vodou_desktop.runtime import Runtime  # noqa: E402
from vodou_desktop.search.embedder import Embedder, EmbedderState  # noqa: E402
from vodou_desktop.vault import FactFilter, Vault  # noqa: E402

K = 8
TARGET = 1.5
FIRST_TARGET_S = 2.0  # issue 22: a new server's first search_memory, model exported earlier


def build_vault(path: Path, size: int, model: Embedder | None) -> None:
    with Vault.open(path) as vault:
        build(vault, size, model, real=min(size, 1_000))


def in_process(path: Path, items: list[tuple[str, str]], embedder: Embedder | str) -> measure.Latency:
    with Runtime.open(path, embedder=embedder) as rt:
        if rt.embedder.wait(600) is EmbedderState.FAILED:
            raise SystemExit(f"model failed: {rt.embedder.error}")
        seconds = measure.samples(lambda it: rt.search.search(it[0], FactFilter(project=it[1]), k=K), items)
    return measure.Latency.of(seconds)


async def over_mcp(path: Path, items: list[tuple[str, str]], model: bool, first_call: dict[str, Any]
                   ) -> measure.Latency:
    """The timed calls; ``first_call`` gets the new server's first ``search_memory``: seconds from
    spawning the process to its answer, the call alone, and whether it used meaning."""
    script = Path(sys.executable).parent / "vodou"
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "vodou_desktop"])
    env = {**os.environ, "VODOU_EMBEDDER": "default" if model else "none"}
    params = StdioServerParameters(command=command, args=[*args, "--vault", str(path), "mcp"], env=env)
    with open(os.devnull, "w") as devnull:
        spawned = time.perf_counter()
        async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(
                read, write, client_info=types.Implementation(name="bench", version="1")) as session:
            await session.initialize()
            first_call["spawn_to_initialized_s"] = round(time.perf_counter() - spawned, 3)
            t0 = time.perf_counter()
            first = await session.call_tool("search_memory", {"query": items[0][0], "project": items[0][1]})
            done = time.perf_counter()
            first_call.update(spawn_to_answer_s=round(done - spawned, 3), call_s=round(done - t0, 3),
                              semantic=bool(first.structured_content and first.structured_content.get("semantic")))
            while model and first.structured_content and first.structured_content["search"] != "meaning and keyword":
                await anyio.sleep(0.5)  # the server's model is still loading: wait, do not time it
                first = await session.call_tool("search_memory", {"query": items[0][0], "project": items[0][1]})
            for query, project in items[:3]:  # warm-up, as in-process
                await session.call_tool("search_memory", {"query": query, "project": project, "k": K})
            seconds = []
            for query, project in items:
                t0 = time.perf_counter()
                result = await session.call_tool("search_memory", {"query": query, "project": project, "k": K})
                seconds.append(time.perf_counter() - t0)
                assert not result.is_error, result.content
    return measure.Latency.of(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="facts in the vault (default 10000)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--no-model", action="store_true", help="keyword search only, on both sides")
    args = parser.parse_args(argv)
    items = [(q, PROJECTS[i % 6]) for i, q in enumerate(queries(args.queries))]
    first_call: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="vodou-bench-mcp-") as folder:
        os.environ["VODOU_HOME"] = folder  # the server's settings, logs, runtime files and model cache stay here
        t0 = time.perf_counter()
        # The model's graph exported into that cache first, as a first run does it: the server then
        # starts as every later one does.
        model = None if args.no_model else Embedder("default", cache_dir=Path(folder) / "cache").start()
        if model is not None and model.wait(900) is not EmbedderState.READY:
            raise SystemExit(f"model failed: {model.error}")
        exported = time.perf_counter() - t0
        path = Path(folder) / "vault.sqlite"
        t0 = time.perf_counter()
        build_vault(path, args.size, model)
        built = time.perf_counter() - t0
        local = in_process(path, items, model if model is not None else "none")
        remote = anyio.run(over_mcp, path, items, model is not None, first_call)
    report: dict[str, Any] = {
        "size": args.size, "queries": len(items), "model": model is not None, "threads": os.environ["OMP_NUM_THREADS"],
        "model_ready_s": round(exported, 1), "build_s": round(built, 1),
        "first_search_spawn_to_initialized_s": first_call.get("spawn_to_initialized_s"),
        "first_search_spawn_to_answer_s": first_call.get("spawn_to_answer_s"),
        "first_search_call_s": first_call.get("call_s"), "first_search_semantic": first_call.get("semantic"),
        "in_process_p50_ms": round(local.p50, 2), "in_process_p95_ms": round(local.p95, 2),
        "mcp_p50_ms": round(remote.p50, 2), "mcp_p95_ms": round(remote.p95, 2),
        "ratio_p50": round(remote.p50 / local.p50, 2), "target_ratio": TARGET,
        "load_average": [round(x, 2) for x in os.getloadavg()], "date_utc": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                          time.gmtime()),
    }
    width = max(map(len, report))
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")
    first = first_call.get("call_s") or 0.0
    print(f"{'PASS' if first <= FIRST_TARGET_S and (args.no_model or first_call.get('semantic')) else 'FAIL'}"
          f"  a new vodou mcp's first search_memory, right after the handshake, answered in {first:.2f} s"
          f" (<= {FIRST_TARGET_S:g} s{'' if args.no_model else ', by meaning'}); the process itself took"
          f" {first_call.get('spawn_to_initialized_s')} s from spawn to the end of the handshake")
    return 0


if __name__ == "__main__":
    sys.exit(main())
